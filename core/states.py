"""The states a job and a shard move through. StrEnums: they compare equal to (and store as) their
values, so rows, JSON and SQL read the plain words."""

from __future__ import annotations

from enum import StrEnum


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"


class ShardState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    #: replaced by its sub-shards (it found too many rows to finish as one piece)
    SPLIT = "split"
    FAILED = "failed"
    CANCELLED = "cancelled"


JOB_STATES: tuple[JobState, ...] = tuple(JobState)
SHARD_STATES: tuple[ShardState, ...] = tuple(ShardState)
FINAL_STATES: frozenset[JobState] = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})
