"""A sharded job's progress as the service counts it: shards done of the total, the rows stored and their
rate, and while it runs an ETA from the shards' pace (the wire shape is zolve_client.wire.Progress)."""

from __future__ import annotations

from zolve_client.wire import Progress


def shard_progress(
    done: int, total: int, rows: int, elapsed: float | None, *, final: bool = False
) -> Progress:
    rate: float | None = None
    eta: float | None = None
    if elapsed is not None and elapsed > 0:
        rate = round(rows / elapsed, 1)
        if done and not final:
            eta = round(elapsed / done * (total - done), 1)
    return Progress(shards_done=done, shards_total=total, rows=rows, rows_per_second=rate, eta_seconds=eta)
