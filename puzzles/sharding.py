"""The small interface a shardable puzzle kind implements, and an in-process parallel driver for it.

    plan(params, run) -> [shard key, ...]             cheap; prunes impossible shards
    run_shard(params, key, run) -> ShardResult        one shard: rows (e.g. boards) and a summary
    combine(params, [summary, ...]) -> result         the job's result from every shard's summary

A shard that turns out too large returns `split` (the keys to run instead) and no rows. A shard that has
run for the host's `run.slice_seconds` returns what it did and `rest`: keys for what is left (see
`over_range`), so that on a shared service no shard holds a worker for long.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

from puzzles.runtime import Run

T = TypeVar("T")


@dataclass
class ShardResult:
    rows: list[int] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    #: instead of this shard: run these (rows and summary are then empty)
    split: list[str] | None = None
    #: besides this shard's rows and summary: what is left of its work, to run as new shards
    rest: list[str] | None = None


def range_key(start: int, stop: int) -> str:
    return f"{start}:{stop}"


def parse_range(key: str) -> range:
    start, stop = (int(part) for part in key.split(":"))
    return range(start, stop)


def over_range(key: str, run: Run, work: Callable[[int], T]) -> tuple[list[T], list[str] | None]:
    """Do `work(index)` for each index of a "start:stop" key, in order, until the range ends or the run's
    slice is used up; returns the results and, if stopped early, the keys of the rest: ranges as long as
    the part done (a slice's worth at the pace just measured), which can run side by side."""
    indices = parse_range(key)
    began, done = time.monotonic(), []
    for index in indices:
        done.append(work(index))
        sliced = run.slice_seconds is not None and time.monotonic() - began >= run.slice_seconds
        if sliced and index + 1 < indices.stop:
            step = len(done)
            rest = range(index + 1, indices.stop, step)
            return done, [range_key(start, min(start + step, indices.stop)) for start in rest]
    return done, None


@runtime_checkable
class ShardedPuzzle(Protocol):
    def plan(self, params: dict[str, Any], run: Run) -> list[str]: ...
    def run_shard(self, params: dict[str, Any], key: str, run: Run) -> ShardResult: ...
    def combine(self, params: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]: ...


def _run_one(module: str, params: dict[str, Any], key: str, time_limit: float | None) -> ShardResult:
    import importlib

    puzzle = cast(ShardedPuzzle, importlib.import_module(module))
    with Run(time_limit) as run:
        return puzzle.run_shard(params, key, run)


def solve_in_process(
    module: str,
    params: dict[str, Any],
    run: Run,
    on_rows: Callable[[list[int]], None] | None = None,
    processes: int | None = None,
) -> dict[str, Any]:
    """Plan, run every shard on all cores, combine: the whole job without the service."""
    import importlib

    puzzle = cast(ShardedPuzzle, importlib.import_module(module))
    pending = list(puzzle.plan(params, run))
    summaries: list[dict[str, Any]] = []
    total, done = len(pending), 0
    pool = ProcessPoolExecutor(processes or os.cpu_count() or 1)
    try:
        futures = {pool.submit(_run_one, module, params, key, run.remaining()) for key in pending}
        while futures:
            finished, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
            run.raise_if_stopped()
            for future in finished:
                result = future.result()
                done += 1
                more = result.split or result.rest or []
                total += len(more)
                futures |= {pool.submit(_run_one, module, params, key, run.remaining()) for key in more}
                if result.split:
                    continue
                summaries.append(result.summary)
                if on_rows is not None:
                    on_rows(result.rows)
                run.progress(shards_done=done, shards_total=total)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)  # a cancel must not wait for every queued shard
        raise
    pool.shutdown()
    return puzzle.combine(params, summaries)
