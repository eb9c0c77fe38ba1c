"""Every page, poll and scrape at 20 finished jobs and at N (default 1,000,000), on a private stack (embedded
PostgreSQL and Redis, whatever DATABASE_URL says: a million rows go to no shared server; the API under
granian; no worker).

    .venv/bin/python bench/scale.py [--jobs 1000000] [--samples 40]

The history is loaded by SQL, as a service that keeps 30 days of jobs for many clients would hold it:
finished jobs of five kinds (88% succeeded, 8% failed, 4% cancelled) of 51 owners, created over 30 days,
each with three history rows; `VACUUM ANALYZE` after loading. Beside the history, in both phases: a client's
500-item batch (500 finished jobs), 60 failed dice jobs of that client (so that its filtered list is a full
page in both phases) and a running expert enumeration (3,000 shards, 1,138,272 boards).
Each request is sent `--samples` times, in rounds of one of each (after 5 unmeasured ones of each); the
table gives the median and p95 at 20 jobs and at N, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402
from store import keys  # noqa: E402
from store.rows import BLOCK_KEYS  # noqa: E402

OWNERS = 51
KINDS = ("dice", "taiji.solve", "leaving_earth.plan", "mastermind.guess", "planetx.deduce")
CHUNK = 100_000
BOARDS = 1_138_272
SHARDS = 3_000
BATCH_ITEMS = 500
SECTORS = 18
WARMUP = 5

# one chunk of finished jobs and their three history rows; :first and :last number the jobs
LOAD_JOBS = """
WITH owners AS (SELECT array_agg(id ORDER BY id) AS ids FROM api_keys WHERE name LIKE 'scale owner %'),
draw AS (
    SELECT i, random() AS r, random() AS r2,
           now() - random() * interval '30 days' AS created,
           exp(random() * ln(72000.0)) * 0.05 AS run_seconds
    FROM generate_series(CAST(:first AS int), CAST(:last AS int)) AS i
),
job AS (
    SELECT gen_random_uuid() AS id,
           (SELECT ids FROM owners)[1 + floor(random() * CAST(:owners AS int))::int] AS owner_id,
           (CAST(:kinds AS text[]))[1 + floor(random() * 5)::int] AS kind, i, created,
           CASE WHEN r < 0.88 THEN 'succeeded' WHEN r < 0.96 THEN 'failed' ELSE 'cancelled' END AS state,
           -- half the cancelled jobs never started
           NOT (r >= 0.96 AND r2 < 0.5) AS started, run_seconds
    FROM draw
),
inserted AS (
    INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state, attempts, result, error,
                      created_at, enqueued_at, started_at, finished_at, updated_at)
    SELECT id, owner_id, kind, jsonb_build_object('n', i), md5(i::text) || md5(kind || i), 300, state,
           CASE WHEN started THEN 1 ELSE 0 END,
           CASE WHEN state = 'succeeded' THEN jsonb_build_object('status', 'ok', 'n', i) END,
           CASE WHEN state = 'failed' THEN '{"type": "TimeLimitExceeded", "message": "out of time"}'::jsonb
           END,
           created, created,
           CASE WHEN started THEN created + interval '0.2 s' END,
           created + interval '0.2 s' + CASE WHEN started THEN run_seconds * interval '1 s'
                                             ELSE interval '0' END,
           created + interval '0.2 s' + run_seconds * interval '1 s'
    FROM job
    RETURNING id, state, created_at, started_at, finished_at
)
INSERT INTO job_events (job_id, at, event, attempt)
SELECT id, e.at, e.event, e.attempt FROM inserted
CROSS JOIN LATERAL (VALUES (created_at, 'created', NULL::int),
                           (coalesce(started_at, created_at), 'running', 1),
                           (finished_at, state, 1)) AS e(at, event, attempt)
"""


def board_code_sql() -> str:
    """Distinct 18-sector codes (3 bits a sector, objects 0-5) from i: the base-6 digits of i times a
    multiplier prime to 6, modulo 6^18."""
    scrambled = f"((i * 1000003) % {6**SECTORS})"
    return " + ".join(f"((({scrambled} / {6**s}) % 6) << {3 * s})" for s in range(SECTORS))


@dataclass
class Fixtures:
    client: dict[str, str]
    admin: dict[str, str]
    batch: str
    enumeration: str


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def sql(stack: Stack, statement: str, **params: object) -> list:
    with stack.db.session() as session:
        result = session.execute(text(statement), params)
        return list(result) if result.returns_rows else []


def load_jobs(stack: Stack, first: int, last: int) -> None:
    """Jobs numbered first..last (inclusive), a chunk per transaction."""
    for start in range(first, last + 1, CHUNK):
        end = min(last, start + CHUNK - 1)
        began = time.perf_counter()
        sql(stack, LOAD_JOBS, first=start, last=end, owners=OWNERS, kinds=list(KINDS))
        print(f"  loaded jobs {start:,}-{end:,} in {time.perf_counter() - began:.1f} s", flush=True)


def vacuum_analyze(stack: Stack) -> None:
    began = time.perf_counter()
    with stack.db.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.execute(text("VACUUM ANALYZE"))
    print(f"  VACUUM ANALYZE in {time.perf_counter() - began:.1f} s", flush=True)


def make_owners(stack: Stack) -> tuple[dict[str, str], int]:
    """51 client keys; returns the first one's headers and id."""
    with stack.db.session() as session:
        made = [keys.create_key(session, name=f"scale owner {n}") for n in range(OWNERS)]
    return {"Authorization": f"Bearer {made[0].key}"}, made[0].id


def make_batch(stack: Stack, owner: int) -> str:
    """A finished 500-item batch of the client: one job per item."""
    rows = sql(
        stack,
        """
        WITH batch AS (
            INSERT INTO batches (id, owner_id, kind, item_count, job_count)
            VALUES (gen_random_uuid(), :owner, 'leaving_earth.plan', :n, :n) RETURNING id
        ), job AS (
            INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state, attempts, result,
                              started_at, finished_at)
            SELECT gen_random_uuid(), :owner, 'leaving_earth.plan', jsonb_build_object('payload', i),
                   md5('batch' || i) || md5(i::text), 60, 'succeeded', 1, jsonb_build_object('cost', i),
                   now(), now()
            FROM generate_series(1, CAST(:n AS int)) AS i
            RETURNING id, params
        )
        INSERT INTO batch_items (batch_id, position, client_id, job_id)
        SELECT batch.id, (params->>'payload')::int - 1, 'item ' || (params->>'payload'), job.id
        FROM batch, job
        RETURNING batch_id
        """,
        owner=owner,
        n=BATCH_ITEMS,
    )
    return str(rows[0][0])


def make_failures(stack: Stack, owner: int) -> None:
    """60 failed dice jobs of the client, created over the 30 days: the filtered lists below fill a page
    at 20 jobs as at N (a page of 50 jobs costs more to render than an empty one, at any size)."""
    sql(
        stack,
        """
        INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state, attempts, error,
                          created_at, started_at, finished_at)
        SELECT gen_random_uuid(), :owner, 'dice', jsonb_build_object('failure', i),
               md5('failure' || i) || md5(i::text), 60, 'failed', 1,
               '{"type": "TimeLimitExceeded", "message": "out of time"}', c, c, c + interval '1 s'
        FROM (SELECT i, now() - random() * interval '30 days' AS c FROM generate_series(1, 60) AS i) AS d
        """,
        owner=owner,
    )


def make_enumeration(stack: Stack, owner: int) -> str:
    """A running expert enumeration: most shards done, a few running or queued, every board stored."""
    job = sql(
        stack,
        """
        INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state, attempts,
                          started_at, shards_total, shards_done, rows_done)
        VALUES (gen_random_uuid(), :owner, 'planetx.enumerate', '{"mode": "expert"}', md5('expert') ||
                md5('enumerate'), 3600, 'running', 1, now() - interval '10 minutes', :shards, :done, :boards)
        RETURNING id
        """,
        owner=owner,
        shards=SHARDS,
        done=SHARDS - 60,
        boards=BOARDS,
    )[0][0]
    sql(
        stack,
        """
        INSERT INTO shards (job_id, key, state, attempts, lease_owner, lease_expires_at, enqueued_at,
                            started_at, finished_at, row_count, solve_seconds)
        SELECT :job, lpad(i::text, 5, '0'),
               CASE WHEN i <= :done THEN 'succeeded' WHEN i <= :done + 20 THEN 'running' ELSE 'queued' END,
               CASE WHEN i <= :done + 20 THEN 1 ELSE 0 END,
               CASE WHEN i > :done AND i <= :done + 20 THEN 'bench' END,
               CASE WHEN i > :done AND i <= :done + 20 THEN now() + interval '1 day' END,
               now(), now() - interval '5 minutes',
               CASE WHEN i <= :done THEN now() - random() * interval '5 minutes' END,
               CASE WHEN i <= :done THEN :boards / :done END, CASE WHEN i <= :done THEN 0.2 END
        FROM generate_series(1, CAST(:shards AS int)) AS i
        """,
        job=job,
        done=SHARDS - 60,
        shards=SHARDS,
        boards=BOARDS,
    )
    sql(  # as the store keeps a finished enumeration's boards: sorted runs of BLOCK_KEYS codes
        stack,
        f"""
        INSERT INTO row_blocks (job_id, first_key, last_key, count, keys)
        SELECT :job, min(code), max(code), count(*), string_agg(int8send(code), ''::bytea ORDER BY code)
        FROM (
            SELECT code, (row_number() OVER (ORDER BY code) - 1) / {BLOCK_KEYS} AS block
            FROM (SELECT {board_code_sql()} AS code FROM generate_series(1::bigint, CAST(:n AS bigint)) AS i)
                AS codes
        ) AS numbered
        GROUP BY block
        """,
        job=job,
        n=BOARDS,
    )
    return str(job)


def setup(stack: Stack) -> Fixtures:
    client, owner = make_owners(stack)
    admin = {"Authorization": f"Bearer {stack.key}"}
    began = time.perf_counter()
    batch = make_batch(stack, owner)
    make_failures(stack, owner)
    enumeration = make_enumeration(stack, owner)
    print(f"  batch and enumeration ({BOARDS:,} boards) in {time.perf_counter() - began:.1f} s", flush=True)
    return Fixtures(client, admin, batch, enumeration)


def requests_to_time(stack: Stack, f: Fixtures) -> dict[str, Callable[[requests.Session], requests.Response]]:
    url = stack.url
    # a loaded job (not a fixture): its page, and its id's first 8 characters for the dashboard's search
    job = str(sql(stack, "SELECT id FROM jobs WHERE params ? 'n' ORDER BY random() LIMIT 1")[0][0])
    # the client's poll: one of its batch's jobs (the client may own no loaded job at 20 jobs)
    client_job = str(
        sql(stack, "SELECT job_id FROM batch_items WHERE batch_id = :b LIMIT 1", b=f.batch)[0][0]
    )

    def get(path: str, headers: dict[str, str]) -> Callable[[requests.Session], requests.Response]:
        return lambda http: http.get(url + path, headers=headers)

    def submit(http: requests.Session) -> requests.Response:
        return http.post(
            url + "/jobs", headers=f.client, json={"kind": "dice", "params": {"dice": 3, "faces": 4}}
        )

    return {
        "GET /metrics": get("/metrics", f.admin),
        "GET /admin/ (overview)": get("/admin/", f.admin),
        "GET /admin/jobs?q=<8-char id prefix>": get(f"/admin/jobs?q={job[:8]}", f.admin),
        "GET /admin/jobs?state=failed&kind=dice": get("/admin/jobs?state=failed&kind=dice", f.admin),
        "GET /jobs?state=failed&kind=mastermind.play (no match)": get(
            "/jobs?state=failed&kind=mastermind.play", f.client
        ),
        "GET /jobs?state=failed&kind=dice": get("/jobs?state=failed&kind=dice", f.client),
        "GET /jobs/{id}": get(f"/jobs/{client_job}", f.client),
        "GET /jobs?limit=50": get("/jobs?limit=50", f.client),
        "POST /jobs": submit,
        "GET /admin/jobs/{id} (a job's page)": get(f"/admin/jobs/{job}", f.admin),
        "GET /admin/jobs/{id} (enumeration, 3,000-shard grid)": get(f"/admin/jobs/{f.enumeration}", f.admin),
        "GET /batches/{id}?limit=500 (500 items)": get(f"/batches/{f.batch}?limit=500", f.client),
        "GET /jobs/{id}/boards?x=7&g=3 (1.1M boards)": get(f"/jobs/{f.enumeration}/boards?x=7&g=3", f.client),
    }


def measure(stack: Stack, f: Fixtures, samples: int) -> dict[str, list[float]]:
    """Each request `samples` times, in rounds (one of each per round), so that whatever else the machine
    does weighs on every request alike."""
    http = requests.Session()
    calls = requests_to_time(stack, f)
    for call in calls.values():
        for _ in range(WARMUP):
            call(http).raise_for_status()
    timings: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(samples):
        for name, call in calls.items():
            began = time.perf_counter()
            response = call(http)
            timings[name].append(time.perf_counter() - began)
            response.raise_for_status()
    for name, seconds in timings.items():
        print(f"  {name}: p50 {statistics.median(seconds) * 1000:.1f} ms", flush=True)
    return timings


def report(small: dict[str, list[float]], large: dict[str, list[float]], jobs: int) -> None:
    print(f"\n| request | 20 jobs p50 / p95 | {jobs:,} jobs p50 / p95 | ratio (p50) |")
    print("|---|---|---|---|")
    for name, base in small.items():
        scaled = large[name]

        def ms(values: list[float]) -> str:
            return f"{percentile(values, 0.5) * 1000:.1f} / {percentile(values, 0.95) * 1000:.1f} ms"

        ratio = percentile(scaled, 0.5) / percentile(base, 0.5)
        print(f"| `{name}` | {ms(base)} | {ms(scaled)} | {ratio:.2f}× |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=1_000_000, help="finished jobs in the large phase")
    parser.add_argument("--samples", type=int, default=40, help="timed requests of each kind per phase")
    args = parser.parse_args()

    began = time.perf_counter()
    # the bench's own clients send thousands of requests a minute: no rate limits
    unlimited = {"ZOLVE_RATE_LIMIT": "", "ZOLVE_SUBMIT_RATE_LIMIT": ""}
    with Stack(api_workers=2, private=True, env=unlimited) as stack:
        fixtures = setup(stack)
        load_jobs(stack, 1, 20)
        vacuum_analyze(stack)
        print("20 jobs:", flush=True)
        small = measure(stack, fixtures, args.samples)
        load_jobs(stack, 21, args.jobs)
        vacuum_analyze(stack)
        print(f"{args.jobs:,} jobs:", flush=True)
        large = measure(stack, fixtures, args.samples)
    report(small, large, args.jobs)
    print(f"\n(the whole run took {time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
