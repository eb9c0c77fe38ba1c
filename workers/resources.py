"""Data the worker offers puzzles through `Run.resource` (puzzles never query the database themselves)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from puzzles.planetx.boardset import RESOURCE as PLANETX_BOARDS
from store import rows
from store.db import Database


def host_resources(db: Database) -> dict[str, Callable[..., Any]]:
    def planetx_boards(mode: str) -> tuple[str, Callable[[], list[int]]] | None:
        """The stored enumeration of a mode as (a key naming it, a loader of its codes)."""
        source = rows.stored_enumeration(db, "planetx.enumerate", mode)
        if source is None:
            return None
        return str(source), lambda: rows.all_codes(db, source)

    return {PLANETX_BOARDS: planetx_boards}
