"""The states a job and a shard move through. StrEnums: they compare equal to (and store as) their
values, so rows, JSON and SQL read the plain words. A job's states are part of the API's contract, so they
are defined once, in the client library (zolve_client.states) that the service depends on."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from zolve_client.states import FINAL_STATES, JobState

__all__ = [
    "DeliveryState",
    "FINAL_STATES",
    "JOB_STATES",
    "REJECTED_ITEM",
    "SHARD_STATES",
    "JobState",
    "ShardState",
    "batch_done",
]


class ShardState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    #: replaced by its sub-shards (it found too many rows to finish as one piece)
    SPLIT = "split"
    FAILED = "failed"
    CANCELLED = "cancelled"


class DeliveryState(StrEnum):
    """A webhook delivery's state."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


JOB_STATES: tuple[JobState, ...] = tuple(JobState)
SHARD_STATES: tuple[ShardState, ...] = tuple(ShardState)


#: the state of a batch item whose params were refused: it has no job, so no JobState
REJECTED_ITEM = "rejected"


def batch_done(item_states: Iterable[str]) -> bool:
    """Whether a batch is done: each of its items' states (its counts' keys) final or rejected."""
    return all(state in (*FINAL_STATES, REJECTED_ITEM) for state in item_states)
