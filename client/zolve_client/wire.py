"""The wire vocabulary of a job's progress, shared by the service and the client, with no terminal code:
the service's counters of a sharded job (shards done of the total, rows stored and their rate, an ETA)
beside whatever the kind's run reports (its phase, its own counters such as `games_done` of
`games_total`, the best found so far).

In JSON (the job's `progress`, a `progress` event's detail) the rows' counters carry the kind's name for
its rows: an enumeration's `boards` and `boards_per_second`; stored, they are `rows`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

#: the service's own keys (the rest belongs to the kind)
_SHARD_KEYS = ("shards_done", "shards_total", "eta_seconds")


@dataclass(frozen=True)
class Progress:
    #: what the run is doing now (a kind's word: "solving", "checking uniqueness"); none once finished
    phase: str | None = None
    shards_done: int | None = None
    shards_total: int | None = None
    rows: int | None = None
    rows_per_second: float | None = None
    eta_seconds: float | None = None
    #: the kind's own fields
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None, rows_name: str = "rows") -> Progress:
        data = dict(data or {})
        phase = data.pop("phase", None)
        if data.get("shards_total") is None:  # a kind's own progress: every other key is the kind's
            return cls(phase=phase, extra=data)
        counters = {key: data.pop(key, None) for key in _SHARD_KEYS}
        rows, rate = data.pop(rows_name, None), data.pop(f"{rows_name}_per_second", None)
        return cls(phase=phase, rows=rows, rows_per_second=rate, extra=data, **counters)

    @property
    def sharded(self) -> bool:
        return self.shards_total is not None

    def merged(self, counters: Progress) -> Progress:
        """This (a kind's) progress with a sharded job's counters in it."""
        return replace(counters, phase=self.phase, extra=self.extra)

    def finished(self) -> Progress:
        """As a finished job keeps it: its counters, no phase (it is no longer in one)."""
        return replace(self, phase=None, eta_seconds=None)

    def to_json(self, rows_name: str | None = "rows") -> dict[str, Any]:
        """As JSON, the rows' counters under `rows_name`; none for None (a kind that stores no rows: "rows:
        0" beside its shards said nothing but confusion)."""
        shown: dict[str, Any] = dict(self.extra)
        if self.phase is not None:
            shown["phase"] = self.phase
        if self.sharded:
            shown.update({"shards_done": self.shards_done, "shards_total": self.shards_total})
            if rows_name is not None:
                shown.update({rows_name: self.rows, f"{rows_name}_per_second": self.rows_per_second})
            shown["eta_seconds"] = self.eta_seconds
        return shown

    def counter(self) -> tuple[str, int, int] | None:
        """What the work counts and how far it is, as (noun, done, total): a sharded job's shards, else a
        kind's `<noun>_done` of `<noun>_total` (or of `<noun>`); None when it counts nothing."""
        if self.shards_total:
            return "shards", self.shards_done or 0, self.shards_total
        for key, done in self.extra.items():
            noun = key.removesuffix("_done")
            if noun == key or not isinstance(done, int):
                continue
            total = self.extra.get(f"{noun}_total", self.extra.get(noun))
            if isinstance(total, int) and total > 0:
                return noun, done, total
        return None

    def percent(self) -> int | None:
        counted = self.counter()
        return None if counted is None else min(100, int(100 * counted[1] / counted[2]))
