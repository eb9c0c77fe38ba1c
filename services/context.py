"""What a use case runs against, and on whose behalf."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from core.config import Settings
from store.db import Database


class Broker(Protocol):
    """Where wake-up messages go (a Celery app; only sending is needed here)."""

    def send_task(self, name: str, args: Any = None, **options: Any) -> Any: ...


@dataclass(frozen=True)
class Context:
    db: Database
    settings: Settings
    broker: Broker


@dataclass(frozen=True)
class Caller:
    """Who asks: an API key. Its id owns the jobs it submits; admins see and manage every job."""

    key_id: int
    is_admin: bool
    #: its key's weight: its share of the API's turns and of the workers against other keys'
    weight: float = 1.0

    @property
    def owner_filter(self) -> int | None:
        """The owner whose jobs this caller may see; None for admins, who see all."""
        return None if self.is_admin else self.key_id
