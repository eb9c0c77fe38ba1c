"""The states a job and a shard move through. StrEnums: they compare equal to (and store as) their
values, so rows, JSON and SQL read the plain words. A job's states are part of the API's contract, so they
are defined once, in the client library (zolve_client.states) that the service depends on."""

from __future__ import annotations

from enum import StrEnum

from zolve_client.states import FINAL_STATES, JobState

__all__ = ["FINAL_STATES", "JOB_STATES", "SHARD_STATES", "JobState", "ShardState"]


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
