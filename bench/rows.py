"""Stored rows at the size of an expert Planet X enumeration (1,138,272 boards): writing them with COPY a
shard at a time, filtered pages and exports through the API, against a baseline tree in the same run.

Each tree (this checkout, and `--baseline REV` checked out in a temporary git worktree) runs the same
measurements in a process of its own, on a private stack of its own code (embedded PostgreSQL and Redis,
the API under granian, no worker), with the same boards, written as its store writes them: each
shard's codes in a transaction of its own (370 shards of the first four sectors, interleaved in the key
as the enumeration's are), with its store's own `copy_rows` (since issue 52, a block per shard, merged
at the end as a finalize merges them; before, a COPY) where it has one. Then `ANALYZE`, and through the API:
filtered pages (median of `--samples`), a page deep in the key, and the CSV and NDJSON exports read to
their end. The trees take turns, `--rounds` times each (baseline first), and each figure is the best of
its rounds, so that a change of the machine's load mid-run does not favour one tree. The table gives each
figure for both trees and the ratio (this tree / baseline; under 1 is faster).

    .venv/bin/python bench/rows.py [--baseline 45850bf] [--samples 30] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.trees import measured_in, worktree  # noqa: E402

#: filtered pages, as a client asks for them (Planet X in sector 7; and a comet in sector 1; ...)
PAGES = {
    "page, no filter": {},
    "page, x=7": {"x": 7},
    "page, x=7 & c=1": {"x": 7, "c": 1},
    "page, x=3 & a=4 & g=9": {"x": 3, "a": 4, "g": 9},
}


def expert_boards() -> list[int]:
    from puzzles.planetx.board import MODES
    from puzzles.planetx.rules import enumerate_boards

    return sorted(enumerate_boards(MODES["expert"]))


def _table(session) -> tuple[str, str]:
    """The rows' table and key column in this tree's schema (before issue 33: boards and code)."""
    from sqlalchemy import text

    names = set(session.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")))
    return ("rows", "key") if "rows" in names else ("boards", "code")


def shards_of(codes: list[int]) -> list[list[int]]:
    """The codes as the enumeration's shards hold them: the boards of one shard share the objects of the
    first four sectors, the low 12 bits of their codes, so each shard's codes are spread over the whole
    key and the shards' rows interleave in key order (before issue 52's export change this bench wrote
    sorted slices of the key instead, which the service never does)."""
    shards: dict[int, list[int]] = {}
    for code in codes:
        shards.setdefault(code & 0o7777, []).append(code)
    return [shards[prefix] for prefix in sorted(shards)]


def copy_text(session, table: str, column: str, job_id: uuid.UUID, codes: list[int]) -> None:
    """Codes into `table` with COPY's text format, one block, in the session's transaction."""
    cursor = session.connection().connection.driver_connection.cursor()
    with cursor.copy(f"COPY {table} (job_id, {column}) FROM STDIN") as copy:
        copy.write("".join(f"{job_id}\t{code}\n" for code in codes))


def _copy(db, job_id: uuid.UUID, codes: list[int]) -> float:
    """Every code, a shard per transaction, as the tree's store writes them: a block each, merged at the
    end as a finalize merges them (store.rows.compact, since issue 52's blocks); before, a COPY each
    (COPY's text format in a tree older than store.rows.copy_rows)."""
    from store import rows

    began = time.perf_counter()
    for shard in shards_of(codes):
        with db.session() as session:
            if hasattr(rows, "copy_rows"):
                rows.copy_rows(session, job_id, shard)
            else:
                copy_text(session, *_table(session), job_id, shard)
    if hasattr(rows, "compact"):
        rows.compact(db, job_id)
    return time.perf_counter() - began


def succeeded_job(db, key_id: int, count: int) -> uuid.UUID:
    from sqlalchemy import text

    job_id = uuid.uuid4()
    with db.session() as session:
        session.execute(
            text(
                "INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state, result, "
                "rows_job_id, started_at, finished_at) VALUES (:id, :owner, 'planetx.enumerate', "
                "'{\"mode\": \"expert\"}', :hash, 3600, 'succeeded', :result, :id, now(), now())"
            ),
            {"id": job_id, "owner": key_id, "hash": uuid.uuid4().hex, "result": json.dumps({"count": count})},
        )
    return job_id


def _timed(get, samples: int) -> float:
    times = []
    for _ in range(samples):
        began = time.perf_counter()
        get()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def measure(codes_file: str, samples: int) -> dict[str, float]:
    """In a tree's own process (cwd: the tree): its stack, the boards written and read."""
    sys.path.insert(0, os.getcwd())
    import requests
    from sqlalchemy import text

    from bench.stack import Stack
    from store import keys

    codes = [int(line) for line in Path(codes_file).read_text().split()]
    figures: dict[str, float] = {}
    with Stack(api_workers=1, private=True) as stack:
        with stack.db.session() as session:
            key_id = keys.create_key(session, name="rows bench").id
        job_id = succeeded_job(stack.db, key_id, len(codes))
        figures["store, 370 shards (s)"] = _copy(stack.db, job_id, codes)
        with stack.db.session() as session:
            table, _ = _table(session)
        with stack.db.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(text(f"ANALYZE {table}"))
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {stack.key}"
        base = f"{stack.url}/jobs/{job_id}/boards"

        def page(args: dict) -> dict:
            reply = http.get(base, params={"limit": 100, **args}, timeout=60)
            reply.raise_for_status()
            return reply.json()

        for name, args in PAGES.items():
            page(args)  # warm
            figures[f"{name} (ms)"] = 1000 * _timed(lambda args=args: page(args), samples)
        deep = page({"cursor": codes[len(codes) * 9 // 10]})
        assert deep["items"], "a page deep in the key"
        figures["page at 90% of the key (ms)"] = 1000 * _timed(
            lambda: page({"cursor": codes[len(codes) * 9 // 10]}), samples
        )
        for fmt, args in (("csv", {}), ("ndjson", {}), ("csv", {"x": 7})):
            began = time.perf_counter()
            reply = http.get(f"{base}.{fmt}", params=args, stream=True, timeout=600)
            # read as a client saving it would: bytes, lines counted (not split one by one in Python)
            lines = sum(chunk.count(b"\n") for chunk in reply.iter_content(chunk_size=1 << 18))
            label = f"export {fmt}{', x=7' if args else ''}"
            figures[f"{label} (s)"] = elapsed = time.perf_counter() - began
            figures[f"{label}: lines"] = lines
            figures[f"{label}: boards/s"] = round((lines - (fmt == "csv")) / elapsed)
    return figures


def _best(name: str, figures: list[float]) -> float:
    """The best of a figure's rounds: the most boards a second, else the least time."""
    return max(figures) if name.endswith("boards/s") else min(figures)


def _run_tree(tree: Path, codes_file: str, samples: int) -> dict[str, float]:
    script = Path(__file__).resolve()
    return measured_in(tree, script, ["--measure", codes_file, "--samples", str(samples)])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", default="45850bf", help="the git revision to compare with")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.samples)))
        return
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="zolve-rows-bench-") as tmp:
        codes = expert_boards()
        codes_file = Path(tmp) / "codes.txt"
        codes_file.write_text("\n".join(map(str, codes)))
        with worktree(args.baseline, Path(tmp)) as baseline_tree:
            print(f"{len(codes):,} expert boards; baseline {args.baseline}; load {os.getloadavg()[0]:.1f}")
            runs: dict[str, list[dict[str, float]]] = {"baseline": [], "current": []}
            for _ in range(args.rounds):
                runs["baseline"].append(_run_tree(baseline_tree, str(codes_file), args.samples))
                runs["current"].append(_run_tree(ROOT, str(codes_file), args.samples))
            baseline, current = (
                {name: _best(name, [run[name] for run in runs[tree]]) for name in runs[tree][0]}
                for tree in runs
            )
    print(f"{'':36} {'baseline':>10} {'this tree':>10} {'ratio':>7}")
    for name, before in baseline.items():
        after = current[name]
        ratio = f"{after / before:6.2f}x" if before and not name.endswith("lines") else ""
        print(f"{name:36} {before:10.2f} {after:10.2f} {ratio:>7}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
