"""The API's resources as the client returns them: TypedDicts over the JSON the service sends, so a job is
still the dict it was (`job["id"]`) and a type checker knows its fields. Each is named after its component
of the OpenAPI document (/openapi.json), and tests/test_client_models.py holds their fields and
required-ness to it. A job is generic in its kind's params and result (zolve_client.kinds: DiceParams,
DiceResult, ...): `Job[DiceParams, DiceResult]` is the document's DiceJob."""

from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar

#: a job's state, as the JSON writes it (zolve_client.states.JobState holds the same words)
State = Literal["queued", "running", "succeeded", "failed", "cancelling", "cancelled", "expired"]
#: a batch item's state: a job's, or `rejected` (its params were refused, no job was made)
ItemState = Literal[
    "queued", "running", "succeeded", "failed", "cancelling", "cancelled", "expired", "rejected"
]

P = TypeVar("P")
R = TypeVar("R")


class JobError(TypedDict):
    message: NotRequired[str]
    type: NotRequired[str]
    #: admins only
    traceback: NotRequired[str]


class JobLinks(TypedDict):
    """Paths (from the host) of what else the job offers: its events, exports and rows where its kind
    stores them."""

    self: NotRequired[str]
    cancel: NotRequired[str]
    events: NotRequired[str]
    deliveries: NotRequired[str]
    rows: NotRequired[str]
    csv: NotRequired[str]
    ndjson: NotRequired[str]
    result_items: NotRequired[str]


class Job(TypedDict, Generic[P, R]):
    """A job of a kind whose params are P and result R (Job[Any, Any]: any kind)."""

    id: str
    kind: str
    params: P
    state: State
    result: NotRequired[R | None]
    error: NotRequired[JobError | None]
    progress: NotRequired[dict[str, Any] | None]
    links: NotRequired[JobLinks]
    attempts: NotRequired[int]
    cancel_requested: NotRequired[bool]
    callback_url: NotRequired[str | None]
    priority: NotRequired[int]
    queue_timeout: NotRequired[float | None]
    time_limit: NotRequired[float]
    created_at: NotRequired[str]
    started_at: NotRequired[str | None]
    finished_at: NotRequired[str | None]
    queued_seconds: NotRequired[float | None]
    run_seconds: NotRequired[float | None]
    #: admins only, while tracing is on
    trace_id: NotRequired[str]


class JobPage(TypedDict):
    """One page of GET /jobs: pass `next_cursor` as ?cursor= for the next."""

    items: NotRequired[list[Job[Any, Any]]]
    next_cursor: NotRequired[str | None]


class BatchItemCreate(TypedDict, Generic[P]):
    """One request of a batch: your id for it and its params."""

    client_id: str
    params: NotRequired[P]


class BatchItem(TypedDict, Generic[R]):
    """One item of a batch, in submission order, with its job's state and result."""

    client_id: str
    state: ItemState
    position: NotRequired[int]
    #: shared by identical requests; none for a rejected item
    job_id: NotRequired[str | None]
    result: NotRequired[R | None]
    error: NotRequired[JobError | None]
    #: why a rejected item's params are invalid
    errors: NotRequired[dict[str, Any] | None]


class Batch(TypedDict, Generic[R]):
    """A batch of one kind's requests whose results are R; `items` one page of them."""

    id: str
    kind: str
    created_at: NotRequired[str]
    done: NotRequired[bool]
    counts: NotRequired[dict[str, int]]
    item_count: NotRequired[int]
    job_count: NotRequired[int]
    items: NotRequired[list[BatchItem[R]]]
    links: NotRequired[dict[str, str]]
    next_cursor: NotRequired[str | None]


class DeliveryAttempt(TypedDict):
    attempt: NotRequired[int]
    at: NotRequired[str]
    #: none: no answer
    status_code: NotRequired[int | None]
    latency_ms: NotRequired[float | None]
    #: why it did not deliver, in the service's words; none: delivered
    reason: NotRequired[str | None]


class Delivery(TypedDict):
    """A webhook delivery, with every attempt at it."""

    id: NotRequired[int]
    webhook_id: NotRequired[str]
    target: NotRequired[Literal["job", "batch"]]
    url: NotRequired[str]
    state: NotRequired[Literal["pending", "delivered", "failed"]]
    created_at: NotRequired[str]
    finished_at: NotRequired[str | None]
    next_attempt_at: NotRequired[str | None]
    attempts: NotRequired[list[DeliveryAttempt]]


class EventData(TypedDict):
    """The JSON of a job event, as a stream's `data:` carries it."""

    id: int
    job_id: str
    kind: str
    event: str
    at: str
    attempt: int
    #: a progress event's counters, a failure's error, ...
    detail: dict[str, Any] | None
