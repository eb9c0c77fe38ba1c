"""The Python client of the zolve API (`pip install zolve-client`; the service's CLI is built on it).

    from zolve_client import Client
    from zolve_client.kinds import DICE

    with Client() as client:                 # ZOLVE_URL and ZOLVE_API_KEY, or Client(url, key)
        job = client.submit(DICE, {"dice": 3, "faces": 6})
        done = client.wait(job)              # the job's event stream; long-polls if streams are refused
        wins = client.result(job)["wins"]    # typed: DiceResult

AsyncClient has the same methods, awaited (`async with AsyncClient() as client:`). Jobs, batches, events
and each kind's params and results are TypedDicts over the JSON (models.py, kinds.py). Every refusal of
the API raises an ApiError subclass carrying its status, message and field messages (`errors`); refused
connections, 429, 502, 503 and 504 are retried with exponential back-off, honouring `Retry-After` (a POST
under the Idempotency-Key the client gives it). It needs httpx and tenacity; rich
(`zolve-client[progress]`) for live progress bars.
"""

from zolve_client._core import DEFAULT_URL, BatchOptions, SubmitOptions
from zolve_client.async_client import AsyncClient
from zolve_client.client import Client
from zolve_client.errors import (
    RETRIED,
    ApiError,
    BadGateway,
    BadRequest,
    Conflict,
    ConnectionDropped,
    GatewayTimeout,
    Invalid,
    JobFailed,
    NoRows,
    NotConnected,
    NotFound,
    RateLimited,
    TimedOut,
    TooLarge,
    Unauthorized,
    Unavailable,
    Unreachable,
    WaitTimeout,
)
from zolve_client.events import Event, parse_events
from zolve_client.kinds import KINDS, Kind
from zolve_client.models import (
    Batch,
    BatchItem,
    BatchItemCreate,
    Delivery,
    DeliveryAttempt,
    EventData,
    Job,
    JobError,
    JobLinks,
    JobPage,
    State,
)
from zolve_client.progress import ExportProgress, Progress, ProgressReporter, describe_progress
from zolve_client.states import FINAL_STATES, JobState
from zolve_client.webhooks import SEEN, SeenMessages, verify_signature

__all__ = [
    "DEFAULT_URL",
    "FINAL_STATES",
    "KINDS",
    "RETRIED",
    "SEEN",
    "ApiError",
    "AsyncClient",
    "BadGateway",
    "BadRequest",
    "Batch",
    "BatchItem",
    "BatchItemCreate",
    "BatchOptions",
    "Client",
    "Conflict",
    "ConnectionDropped",
    "Delivery",
    "DeliveryAttempt",
    "Event",
    "EventData",
    "ExportProgress",
    "GatewayTimeout",
    "Invalid",
    "Job",
    "JobError",
    "JobFailed",
    "JobLinks",
    "JobPage",
    "JobState",
    "Kind",
    "NoRows",
    "NotConnected",
    "NotFound",
    "Progress",
    "ProgressReporter",
    "RateLimited",
    "SeenMessages",
    "State",
    "SubmitOptions",
    "TimedOut",
    "TooLarge",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "WaitTimeout",
    "describe_progress",
    "parse_events",
    "verify_signature",
]
