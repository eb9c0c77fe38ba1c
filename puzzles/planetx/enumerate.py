"""Kind `planetx.enumerate`: every board of a mode (optionally under extra facts), in shards.

A shard is a prefix: the objects of the first k sectors. Planning finds every prefix that starts a board
in one walk over the first k sectors' literals (`solver.prefixes`). Each shard is then walked in one check
by the process's long-lived propagator solver (see `solver.enumerate_shard`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzles.planetx.board import BITS, LETTERS, MODES, OBJECT_NAMES, OBJECTS, Mode
from puzzles.planetx.rules import Fact
from puzzles.planetx.solver import enumerate_shard, prefixes
from puzzles.runtime import Run
from puzzles.sharding import ShardResult, solve_in_process

#: prefix length per mode: expert at 4 gives 370 shards of at most 22,053 boards, the fastest of depths 3-5
#: in bench/planetx_enumerate.py (in-process and through the service)
DEFAULT_SHARD_DEPTH = {"standard": 2, "expert": 4}
#: a shard that finds more boards than this stops and splits by one more sector (the walk does not slow
#: down as a shard grows; this bounds a shard's rows in memory)
SHARD_CAP = 50_000


@dataclass(frozen=True)
class Request:
    """A job's params (as schemas.planetx.EnumerateParams loads them), typed."""

    mode: Mode
    facts: list[Fact]
    #: the sectors whose objects name a shard
    shard_depth: int
    #: a shard that finds more boards than this splits by one more sector
    shard_cap: int

    @classmethod
    def of(cls, params: dict[str, Any]) -> Request:
        mode = MODES[params["mode"]]
        facts = [(c["sector"], OBJECTS[c["object"]], c["present"]) for c in params.get("constraints") or []]
        depth = min(params.get("shard_depth") or DEFAULT_SHARD_DEPTH[mode.name], mode.sectors)
        return cls(mode, facts, depth, params.get("max_shard_boards") or SHARD_CAP)


def plan(params: dict[str, Any], run: Run) -> list[str]:
    """Shard keys (prefix letter strings, in order) of every prefix that at least one board starts with."""
    request = Request.of(params)
    found = prefixes(request.mode, request.shard_depth, run, request.facts)
    run.progress(phase="planning", depth=request.shard_depth, prefixes=len(found))
    return ["".join(LETTERS[obj] for obj in prefix) for prefix in found]


def run_shard(params: dict[str, Any], key: str, run: Run) -> ShardResult:
    """The shard's boards and their histogram; reports the time of each (`walk_ms`, `histogram_ms`) as
    its last progress, which a worker logs with the shard's claim and store."""
    request = Request.of(params)
    mode, prefix = request.mode, [LETTERS.index(letter) for letter in key]
    started = time.perf_counter()
    outcome = enumerate_shard(mode, prefix, run, request.facts, cap=request.shard_cap)
    walked = time.perf_counter()
    if not outcome.complete and len(prefix) < mode.sectors:
        run.progress(walk_ms=round((walked - started) * 1000, 2))
        return ShardResult(split=[key + letter for letter in LETTERS])
    summary = {"count": len(outcome.codes), "histogram": histogram(mode, outcome.codes)}
    done = time.perf_counter()
    run.progress(walk_ms=round((walked - started) * 1000, 2), histogram_ms=round((done - walked) * 1000, 2))
    return ShardResult(rows=outcome.codes, summary=summary)


def histogram(mode: Mode, codes: list[int]) -> list[list[int]]:
    """Per sector, how many of the boards hold each object (indexed like LETTERS)."""
    array = np.fromiter(codes, dtype=np.int64, count=len(codes))
    return [np.bincount((array >> (BITS * i)) & 7, minlength=6).tolist() for i in range(mode.sectors)]


def combine(params: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]:
    mode = Request.of(params).mode
    count = sum(s["count"] for s in summaries)
    table = [[0] * 6 for _ in range(mode.sectors)]
    for summary in summaries:
        for index, row in enumerate(summary["histogram"]):
            for obj, n in enumerate(row):
                table[index][obj] += n
    return {
        "mode": mode.name,
        "count": count,
        "constraints": params.get("constraints") or [],
        "sectors": [
            {
                "sector": index + 1,
                "counts": dict(zip(OBJECT_NAMES, row, strict=True)),
                "planet_x_probability": row[OBJECTS["planet_x"]] / count if count else 0.0,
            }
            for index, row in enumerate(table)
        ],
    }


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """In-process, on every core (`zolve solve`)."""
    return solve_in_process(__name__, params, run, on_rows=run.rows)
