"""A sharded kind for the tests (registered in tests.plugins as `test.sharded`), steered by its params to
open the windows the failure tests need: a slow plan that ignores cancels, a shard that splits, slow or held
shards, and finalizes that fail or kill their process."""

from __future__ import annotations

import os
import signal
import time
import zlib
from pathlib import Path
from typing import Any

from puzzles.runtime import Run
from puzzles.sharding import ShardResult


def plan(params: dict[str, Any], run: Run) -> list[str]:
    time.sleep(params["plan_seconds"])  # deaf to cancels on purpose: a plan that ends as a cancel lands
    return list(params["keys"])


def run_shard(params: dict[str, Any], key: str, run: Run) -> ShardResult:
    deadline = time.monotonic() + params["shard_seconds"]
    while time.monotonic() < deadline:
        run.raise_if_stopped()
        time.sleep(0.05)
    if key in params["held"]:
        _wait_for(Path(params["release"]), run)
    if key in params["split"]:
        return ShardResult(split=list(params["split"][key]))
    return ShardResult(rows=[zlib.crc32(key.encode())], summary={"key": key})


def _wait_for(release: Path, run: Run) -> None:
    deadline = time.monotonic() + 120  # a test that never releases fails on its own; the shard ends anyway
    while not release.exists() and time.monotonic() < deadline:
        run.raise_if_stopped()
        time.sleep(0.05)


def combine(params: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]:
    if params["finalize"] == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    keys = sorted(summary["key"] for summary in summaries)
    # NaN is no JSON: PostgreSQL refuses to store it, every time
    return {"count": float("nan") if params["finalize"] == "unstorable" else len(keys), "keys": keys}


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    from puzzles.sharding import solve_in_process

    return solve_in_process(__name__, params, run)
