"""The Python client of the zolve API (`pip install zolve-client`; the service's CLI is built on it).

    from zolve_client import Client

    client = Client("http://127.0.0.1:8000", "zk_...")
    job = client.submit("planetx.enumerate", {"mode": "standard"})
    done = client.wait(job["id"])            # the job's event stream; long-polls if streams are refused
    for board in client.iter_boards(job["id"]):
        ...

Every refusal of the API raises an ApiError subclass carrying its status, message and field messages
(`errors`); 429 and 503 are retried with exponential back-off, honouring `Retry-After`. It needs urllib3
and tenacity; rich (`zolve-client[progress]`) for live progress bars.
"""

from zolve_client.client import Client
from zolve_client.errors import (
    RETRIED,
    ApiError,
    BadRequest,
    Conflict,
    Invalid,
    JobFailed,
    NoRows,
    NotFound,
    RateLimited,
    TooLarge,
    Unauthorized,
    Unavailable,
    Unreachable,
    WaitTimeout,
)
from zolve_client.events import Event, parse_events
from zolve_client.progress import ExportProgress, Progress, ProgressReporter, describe_progress
from zolve_client.states import FINAL_STATES, JobState
from zolve_client.webhooks import SEEN, SeenMessages, verify_signature

__all__ = [
    "FINAL_STATES",
    "RETRIED",
    "SEEN",
    "ApiError",
    "BadRequest",
    "Client",
    "Conflict",
    "Event",
    "ExportProgress",
    "Invalid",
    "JobFailed",
    "JobState",
    "NoRows",
    "NotFound",
    "Progress",
    "ProgressReporter",
    "RateLimited",
    "SeenMessages",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "WaitTimeout",
    "describe_progress",
    "parse_events",
    "verify_signature",
]
