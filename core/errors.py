"""Why work stopped, and what went wrong, as every layer passes it on: the runner stores a JobError on
the job, events keep its short form, the API shows it (the traceback to admins only), webhooks send it."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

#: an error's message is kept in full on the job; its event keeps the start
EVENT_MESSAGE_CHARS = 500


class StopReason(StrEnum):
    """Why a run was stopped before it ended by itself (puzzles.runtime.Run.stop)."""

    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    #: the worker no longer holds the job's lease: another has it, or will
    LEASE_LOST = "lease lost"


class ErrorType(StrEnum):
    """The error types the service itself gives (a solver's own exception keeps its class name)."""

    CANCELLED = "Cancelled"
    TIME_LIMIT = "TimeLimitExceeded"
    WORKER_LOST = "WorkerLost"
    FINALIZE_FAILED = "FinalizeFailed"
    QUEUE_TIMEOUT = "QueueTimeout"


@dataclass(frozen=True)
class JobError:
    """What went wrong with a job or shard: `type` (an ErrorType, or the exception's class), a message
    for people, and for admins the traceback when there is one."""

    type: str
    message: str
    traceback: str | None = None

    @classmethod
    def from_exception(cls, exc: BaseException) -> JobError:
        """The exception being handled, with its traceback (call inside `except`)."""
        return cls(type(exc).__name__, str(exc), traceback.format_exc())

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobError:
        return cls(str(data.get("type")), str(data.get("message", "")), data.get("traceback"))

    def to_json(self) -> dict[str, Any]:
        """As the job row stores it."""
        stored = {"type": self.type, "message": self.message}
        if self.traceback is not None:
            stored["traceback"] = self.traceback
        return stored

    def shown(self, *, is_admin: bool) -> dict[str, Any]:
        """As a caller may see it: the traceback is for admins only."""
        return self.to_json() if is_admin else {"type": self.type, "message": self.message}

    def event_detail(self) -> dict[str, Any]:
        """As an event keeps it: no traceback, the message's start."""
        return {"type": self.type, "message": self.message[:EVENT_MESSAGE_CHARS]}

    def within(self, where: str) -> JobError:
        """The same error, its message saying where it happened (e.g. "shard 3:0")."""
        return JobError(self.type, f"{where}: {self.message}", self.traceback)
