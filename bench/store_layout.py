"""What storing a shard's boards costs PostgreSQL, by layout (issue 52): the expert enumeration's
1,138,272 boards written a shard per transaction (370 shards of the first four sectors), as the store
writes them, against layouts the store could use instead, on one embedded PostgreSQL in one run.

- `rows, text` (the baseline): a row per board, COPY's text format, as before issue 52's binary COPY;
- `rows, no primary key`: the same rows into a table without the primary key (what the index costs);
- `rows, sorted slices`: a row per board, but each transaction a slice of the sorted key (what the
  shards' interleaving in the key costs the index);
- `one block per shard`: the shard's codes as one row, a bytea of 8-byte codes (store.rows.copy_rows,
  issue 52's store; before it, a row per board in COPY's binary format measured 0.67x the baseline).

Layouts take turns, `--rounds` times each; each figure is the median per shard over a layout's rounds,
and the ratio is against the baseline.

    .venv/bin/python bench/store_layout.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.rows import copy_text, expert_boards, shards_of, succeeded_job  # noqa: E402
from services.schema import migrate  # noqa: E402
from store import keys, rows  # noqa: E402
from store.db import Database  # noqa: E402
from zolve.embedded import EmbeddedServices  # noqa: E402

EXTRA_TABLES = """
CREATE TABLE IF NOT EXISTS bench_rows_no_key (job_id uuid NOT NULL, key bigint NOT NULL, payload bytea);
"""


Writer = Callable[[Session, uuid.UUID, int, list[int]], None]
LAYOUTS: dict[str, tuple[Writer, bool]] = {
    "rows, text": (lambda s, job, n, codes: copy_text(s, "rows", "key", job, codes), False),
    "rows, no primary key": (
        lambda s, job, n, codes: copy_text(s, "bench_rows_no_key", "key", job, codes),
        False,
    ),
    "rows, sorted slices": (lambda s, job, n, codes: copy_text(s, "rows", "key", job, codes), True),
    "one block per shard": (lambda s, job, n, codes: rows.copy_rows(s, job, codes), False),
}


def _write(db: Database, job_id: uuid.UUID, writer: Writer, shards: list[list[int]]) -> list[float]:
    """Seconds per shard: a transaction each, committed without waiting for the WAL as the store does."""
    seconds = []
    for number, codes in enumerate(shards):
        began = time.perf_counter()
        with db.session() as session:
            session.execute(text("SET LOCAL synchronous_commit = off"))
            writer(session, job_id, number, codes)
        seconds.append(time.perf_counter() - began)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    codes = expert_boards()
    by_shard = shards_of(codes)
    step = -(-len(codes) // len(by_shard))
    slices = [codes[start : start + step] for start in range(0, len(codes), step)]
    with tempfile.TemporaryDirectory(prefix="zolve-store-layout-") as tmp:
        services = EmbeddedServices(Path(tmp))
        url = services.start_postgres()
        try:
            migrate(url)
            db = Database(url)
            with db.session() as session:
                session.execute(text(EXTRA_TABLES))
                owner = keys.create_key(session, name="store layout bench").id
            times: dict[str, list[float]] = {name: [] for name in LAYOUTS}
            for _ in range(args.rounds):
                for name, (writer, sorted_slices) in LAYOUTS.items():
                    job_id = succeeded_job(db, owner, len(codes))
                    times[name] += _write(db, job_id, writer, slices if sorted_slices else by_shard)
            db.dispose()
        finally:
            services.stop_postgres()
    print(f"{len(codes):,} expert boards, {len(by_shard)} shards; {args.rounds} rounds of each layout")
    baseline = statistics.median(times["rows, text"])
    print(f"{'layout':24} {'ms a shard':>10} {'ratio':>7}")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"{name:24} {median * 1000:10.2f} {median / baseline:6.2f}x")


if __name__ == "__main__":
    main()
