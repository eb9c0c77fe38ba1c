"""Aggregates for monitoring, from the counters PostgreSQL keeps per transition (store.tallies): a scrape
costs the same at twenty jobs and at millions."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy.orm import Session

from core.states import ShardState
from store import tallies

#: upper bounds (seconds) of the job run-time histogram buckets; the tallies' trigger (migration 0009,
#: zolve_run_bucket) buckets by the same bounds
RUN_SECONDS_BUCKETS = (0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600)


@dataclass(frozen=True)
class Figures:
    jobs: list[tuple[str, str, int]]
    shards: list[tuple[str, int]]
    rows_written: int
    #: cumulative counts per bucket of RUN_SECONDS_BUCKETS, total count, sum of seconds
    run_seconds: tuple[list[int], int, float]


def figures(session: Session) -> Figures:
    """Everything /metrics shows, folding the counters' deltas first (unless another session is)."""
    tallies.compact(session)
    counts = tallies.job_counts(session)
    shards = tallies.shard_counts(session)
    return Figures(
        jobs=jobs_by_kind_and_state(counts),
        shards=[(state, n) for state, (n, _) in shards.items()],
        rows_written=shards.get(ShardState.SUCCEEDED, (0, 0))[1],
        run_seconds=run_seconds_histogram(counts),
    )


def jobs_by_kind_and_state(counts: list[tallies.JobCount]) -> list[tuple[str, str, int]]:
    jobs: dict[tuple[str, str], int] = defaultdict(int)
    for count in counts:
        jobs[count.kind, count.state] += count.jobs
    return [(kind, state, n) for (kind, state), n in sorted(jobs.items()) if n]


def run_seconds_histogram(counts: list[tallies.JobCount]) -> tuple[list[int], int, float]:
    """Finished jobs' run times: cumulative counts per bucket of RUN_SECONDS_BUCKETS, total count, sum."""
    per_bucket = [0] * (len(RUN_SECONDS_BUCKETS) + 1)
    total = 0.0
    for count in counts:
        if count.run_bucket >= 0:
            per_bucket[count.run_bucket] += count.jobs
            total += count.run_seconds
    cumulative, running = [], 0
    for n in per_bucket:
        running += n
        cumulative.append(running)
    return cumulative[:-1], cumulative[-1], total
