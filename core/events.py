"""What a job's history records: the names of its events (the `job_events` table, the event streams'
`event:` lines, the webhooks' triggers)."""

from __future__ import annotations

from enum import StrEnum

from core.states import JobState


class EventName(StrEnum):
    CREATED = "created"
    #: a sharded job's plan was stored: detail {shards, worker}
    PLANNED = "planned"
    RUNNING = "running"
    #: detail: a Progress (core.progress)
    PROGRESS = "progress"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCEL_REQUESTED = "cancel_requested"
    CANCELLED = "cancelled"
    #: not started within its queue_timeout: detail {queue_timeout}
    EXPIRED = "expired"
    #: its worker was lost: queued again
    REQUEUED = "requeued"
    #: an operator ran it again from the start
    RETRIED = "retried"
    SHARD_REQUEUED = "shard_requeued"


#: the events that end a job's stream
FINAL_EVENTS: frozenset[EventName] = frozenset(
    {EventName.SUCCEEDED, EventName.FAILED, EventName.CANCELLED, EventName.EXPIRED}
)
#: what a stream's `state` filter matches, besides the event of the state's own name
STATE_EVENTS: dict[JobState, tuple[EventName, ...]] = {
    JobState.QUEUED: (EventName.CREATED, EventName.REQUEUED, EventName.RETRIED),
    JobState.CANCELLING: (EventName.CANCEL_REQUESTED,),
}


_ENTERING = {JobState.QUEUED: EventName.CREATED, JobState.CANCELLING: EventName.CANCEL_REQUESTED}


def entered(state: JobState | str) -> EventName:
    """The event that records a job entering `state`: its own name (running, succeeded, ...), created for
    queued (requeued and retried enter it too) and cancel_requested for cancelling."""
    return _ENTERING.get(JobState(state)) or EventName(state)
