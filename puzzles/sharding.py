"""The small interface a shardable puzzle kind implements, and an in-process parallel driver for it.

    plan(params, run) -> [shard key, ...]             cheap; prunes impossible shards
    run_shard(params, key, run) -> ShardResult        one shard: rows (e.g. boards) and a summary
    combine(params, [summary, ...]) -> result         the job's result from every shard's summary

A shard that turns out too large returns `split` (the keys to run instead) and no rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from puzzles.runtime import Run


@dataclass
class ShardResult:
    rows: list[int] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    split: list[str] | None = None


class ShardedPuzzle(Protocol):
    def plan(self, params: dict[str, Any], run: Run) -> list[str]: ...
    def run_shard(self, params: dict[str, Any], key: str, run: Run) -> ShardResult: ...
    def combine(self, params: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]: ...


def _run_one(module: str, params: dict[str, Any], key: str, time_limit: float | None) -> ShardResult:
    import importlib

    puzzle = importlib.import_module(module)
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

    puzzle = importlib.import_module(module)
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
                if result.split:
                    total += len(result.split)
                    futures |= {
                        pool.submit(_run_one, module, params, key, run.remaining()) for key in result.split
                    }
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
