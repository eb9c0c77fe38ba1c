"""The states a job moves through, as the API writes them. StrEnums: they compare equal to the plain words
of the JSON (`job["state"] == JobState.SUCCEEDED`); the service stores and sends these very values."""

from __future__ import annotations

from enum import StrEnum


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"
    #: not started within its `queue_timeout`: it ended without running
    EXPIRED = "expired"


#: the states a job does not leave
FINAL_STATES: frozenset[JobState] = frozenset(
    {JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.EXPIRED}
)
