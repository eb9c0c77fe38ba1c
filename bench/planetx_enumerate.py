"""Planet X enumeration, all in one run on this machine, as ratios (issue 39):

0. a fixed CPU yardstick (`yardstick`: a frozen pure-Python count of the standard boards, `YARDSTICK_ROUNDS`
   times, about 2 s), timed before each measured part, so that a figure can be read as a multiple of what
   the machine does in the same minute;
1. in-process, one core (thread CPU time): the check–model–block loop (a fresh QF_FD context per shard, as
   before issue 39), the user-propagator walk (`puzzles.allmodels`, one long-lived solver) and the
   plain-Python enumerator (`rules.enumerate_boards`), in boards/s; every shard of the walk checked
   against the reference;
2. the shard depth, measured: plan + walk + histogram over the whole mode at several depths;
3. the job through the service (`zolve up --workers N` itself, `bench.stack.UpStack`; with `--service
   stack`, the API and one worker of N processes on embedded servers), submit → every board stored → the
   CSV export read to its end, median of `--service-runs`, each as a multiple of the yardstick timed just
   before it (with `--rounds R` the worker counts take turns R times, and the scaling table gives the
   medians of the rounds); and the split of the workers' time per shard (claim, walk, histogram, store,
   dispatch, and the gap to the process's next shard), from the line the worker logs per shard
   (`services.running.SHARD_TIMING`) and Celery's own "succeeded in" line; with `--waits`, what
   PostgreSQL's busy sessions wait on meanwhile (`WaitSampler`: locks, or CPU);
4. with `--ceiling R`, the most the service could gain from more solver processes on this machine: every
   shard walked in one process, against the same shards dealt out to N processes at once (no service, no
   database: wall clock, R rounds taking turns, medians), for each count in `--workers`.

    .venv/bin/python bench/planetx_enumerate.py [--mode expert] [--repeat 3] [--old-every 8]
        [--depths 3,4,5] [--service-runs 1] [--service-depths 4,5] [--workers 2] [--service up]
        [--rounds 1] [--ceiling 0] [--waits]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import json
import multiprocessing
import os
import re
import statistics
import sys
import threading
import time
from pathlib import Path

import requests
import sqlalchemy
import z3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack, UpStack  # noqa: E402
from puzzles.planetx import enumerate as planetx  # noqa: E402
from puzzles.planetx.board import LETTERS, MODES, Mode  # noqa: E402
from puzzles.planetx.rules import enumerate_boards  # noqa: E402
from puzzles.planetx.solver import BoardModel, board_walker, enumerate_models  # noqa: E402
from puzzles.runtime import Run  # noqa: E402
from services.running import SHARD_TIMING  # noqa: E402

#: the yardstick's rounds: about 2 s on this machine kind, idle
YARDSTICK_ROUNDS = 15


def digest(codes: list[int]) -> str:
    return hashlib.sha256(",".join(map(str, sorted(codes))).encode()).hexdigest()[:16]


def prefix(key: str) -> list[int]:
    return [LETTERS.index(letter) for letter in key]


def yardstick_count() -> int:
    """The standard boards counted by plain backtracking, sector by sector (frozen: it is the yardstick,
    not the project's enumerator, so it does not get faster when the project's code does)."""
    sectors, counts = 12, [2, 1, 2, 1, 4, 2]
    empty, planet_x, gas, dwarf, asteroid, comet = range(6)
    primes = {s for s in range(2, sectors + 1) if all(s % d for d in range(2, s))}
    board = [0] * sectors
    found = 0

    def ok(i: int) -> bool:
        obj, left, right = board[i], board[i - 1], board[(i + 1) % sectors]
        if obj == asteroid:
            return asteroid in (left, right)
        if obj == gas:
            return empty in (left, right)
        if obj == dwarf:
            return planet_x not in (left, right)
        if obj == planet_x:
            return dwarf not in (left, right)
        return True

    def place(i: int) -> None:
        nonlocal found
        if i == sectors:
            found += ok(sectors - 1) and ok(0)
            return
        for obj in range(6):
            if not counts[obj] or (obj == comet and i + 1 not in primes):
                continue
            board[i] = obj
            if i >= 2 and not ok(i - 1):
                continue
            counts[obj] -= 1
            place(i + 1)
            counts[obj] += 1

    place(0)
    return found


def yardstick() -> float:
    """Seconds (wall clock, as the service runs are timed) of `YARDSTICK_ROUNDS` yardstick counts."""
    started = time.perf_counter()
    for _ in range(YARDSTICK_ROUNDS):
        assert yardstick_count() == 4446
    return time.perf_counter() - started


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def plan(mode: Mode, depth: int) -> tuple[list[str], float]:
    started = time.perf_counter()
    with Run(600) as run:
        keys = planetx.plan({"mode": mode.name, "shard_depth": depth}, run)
    return keys, time.perf_counter() - started


def walk_shards(mode: Mode, keys: list[str]) -> tuple[dict[str, list[int]], dict[str, float], int]:
    """Every shard through the propagator walk (the kind's `enumerate_shard`): rows and seconds per shard,
    and how many boards Z3 met again (blocked again, not recorded)."""
    rows, seconds, repeats = {}, {}, 0
    walker = board_walker(mode)
    with Run(3600) as run:
        for key in keys:
            started = time.thread_time()
            fixed = [walker.model.at(index + 1, obj) for index, obj in enumerate(prefix(key))]
            walk = walker.walker.walk(run, fixed)
            seconds[key] = time.thread_time() - started
            assert walk.complete
            rows[key], repeats = walk.values, repeats + walk.repeats
    return rows, seconds, repeats


def blocking_loop(mode: Mode, key: str) -> list[int]:
    """One shard the way it ran before issue 39: a fresh context, the rules, a blocking clause per model."""
    with Run(3600) as run:
        model = BoardModel(mode, run.context())
        model.fix(prefix(key))
        outcome = enumerate_models(model, run)
    assert outcome.complete
    return outcome.codes


def best_of(repeat: int, mode: Mode, keys: list[str]) -> tuple[float, list[int], float, dict, int]:
    """The plain-Python enumerator and the walk, interleaved `repeat` times; the fastest of each (the
    run least disturbed by whatever else shares the cores)."""
    reference_seconds, walk_seconds = float("inf"), float("inf")
    for _ in range(repeat):
        started = time.thread_time()
        reference = enumerate_boards(mode)
        reference_seconds = min(reference_seconds, time.thread_time() - started)
        rows, seconds, repeats = walk_shards(mode, keys)
        if sum(seconds.values()) < walk_seconds:
            walk_seconds, best = sum(seconds.values()), (rows, seconds, repeats)
    return reference_seconds, reference, walk_seconds, best[1], best[2]


def in_process(mode: Mode, depth: int, old_every: int, repeat: int) -> None:
    keys, plan_seconds = plan(mode, depth)
    reference_seconds, reference, walk_seconds, seconds, repeats = best_of(repeat, mode, keys)
    rows, _, _ = walk_shards(mode, keys)
    walked = [code for codes in rows.values() for code in codes]
    assert len(walked) == len(set(walked)) == len(reference) and digest(walked) == digest(reference)
    bad = [key for key in keys if digest(rows[key]) != digest(enumerate_boards(mode, prefix=prefix(key)))]
    assert not bad, bad
    sample = keys[::old_every]
    old_seconds, old_boards = 0.0, 0
    for key in sample:
        began = time.thread_time()
        codes = blocking_loop(mode, key)
        old_seconds += time.thread_time() - began
        assert digest(codes) == digest(rows[key]), key
        old_boards += len(codes)
    new_on_sample = old_boards / sum(seconds[key] for key in sample)
    old_rate, new_rate = old_boards / old_seconds, len(walked) / walk_seconds
    with_plan = len(walked) / (walk_seconds + plan_seconds)
    reference_rate = len(reference) / reference_seconds
    print(
        f"1. in-process, one core, {mode.name}: {len(reference):,} boards, depth {depth} ({len(keys)} shards)"
    )
    print("   every shard of the walk = the plain-Python enumerator's (count and sha256 of the sorted codes)")
    print(f"   the walk met {repeats} boards again (blocked again, counted once)")
    print(f"   blocking-clause loop, every {old_every}th shard ({old_boards:,}) : {old_rate:9,.0f} boards/s")
    print(
        f"   propagator walk, the same shards             : {new_on_sample:9,.0f} boards/s"
        f" = {new_on_sample / old_rate:5.1f}x the loop"
    )
    print(
        f"   propagator walk, every shard (best of {repeat})    : {new_rate:9,.0f} boards/s"
        f" ({with_plan:,.0f} with planning, {plan_seconds:.2f} s)"
    )
    print(f"   plain-Python enumerator (best of {repeat})         : {reference_rate:9,.0f} boards/s")
    print(
        f"   plain-Python / walk = {reference_rate / new_rate:.2f}x; walk / loop = {new_rate / old_rate:.1f}x"
    )


def depths(mode: Mode, candidates: list[int]) -> None:
    print(f"2. shard depth, {mode.name}: plan + walk + histogram of every shard, one core")
    for depth in candidates:
        keys, plan_seconds = plan(mode, depth)
        started = time.perf_counter()
        rows, _, _ = walk_shards(mode, keys)
        walk_seconds = time.perf_counter() - started
        started = time.perf_counter()
        for codes in rows.values():
            planetx.histogram(mode, codes)
        histogram_seconds = time.perf_counter() - started
        total = sum(len(codes) for codes in rows.values())
        seconds = plan_seconds + walk_seconds + histogram_seconds
        print(
            f"   depth {depth}: {len(keys):5,} shards, largest {max(map(len, rows.values())):6,},"
            f" plan {plan_seconds:5.2f} s, walk {walk_seconds:6.1f} s, histogram {histogram_seconds:4.2f} s"
            f" = {total / seconds:8,.0f} boards/s"
        )


def through_service(stack: Stack, mode: str, depth: int) -> dict:
    """Submit → succeeded (every board stored) → the CSV export read to its end."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {stack.key}"
    started, submitted = time.perf_counter(), time.time()
    params = {"mode": mode, "shard_depth": depth, "max_shard_boards": 100_000}
    job = http.post(stack.url + "/jobs", json={"kind": "planetx.enumerate", "params": params, "fresh": True})
    job = job.json()
    while job["state"] not in ("succeeded", "failed", "cancelled"):
        job = http.get(f"{stack.url}/jobs/{job['id']}?wait=30").json()
    assert job["state"] == "succeeded", job
    stored, succeeded = time.perf_counter(), time.time()
    lines = 0
    with http.get(f"{stack.url}/jobs/{job['id']}/boards.csv", stream=True) as response:
        response.raise_for_status()
        for chunk in response.iter_content(1 << 20):
            lines += chunk.count(b"\n")
    exported = time.perf_counter()
    count = job["result"]["count"]
    assert lines == count + 1, (lines, count)  # a header and a line per board
    return {
        "id": job["id"],
        "stored": stored - started,
        "export": exported - stored,
        "count": count,
        "submitted": submitted,
        "succeeded": succeeded,
    }


SUCCEEDED = re.compile(r"Task \S+\[([0-9a-f-]+)\] succeeded in ([0-9.e-]+)s")


def shard_timings(log: Path, job_id: str) -> list[dict]:
    """The worker's timing line of every shard of the job (`services.running.SHARD_TIMING`), each with its
    Celery task's whole time (`task_s`, from Celery's "succeeded in" line) when the log has it."""
    marker = SHARD_TIMING + " "
    timings, tasks = [], {}
    for line in log.read_text(errors="replace").splitlines():
        if marker in line:
            timing = json.loads(line.split(marker, 1)[1])
            if timing["job"] == job_id:
                timings.append(timing)
        elif match := SUCCEEDED.search(line):
            tasks[match[1]] = float(match[2])
    for timing in timings:
        if timing.get("task") in tasks:
            timing["task_s"] = tasks[timing["task"]]
    return timings


def split(timings: list[dict]) -> dict[str, float]:
    """Seconds of worker time per part, summed over the job's shards and processes: `dispatch` is the
    rest of a Celery task after its last shard was stored (the messages sent, held work released; and
    the task's few steps before its first claim, which its "succeeded in" includes); `between` is each
    process's gap from the end of one task to the beginning of its next shard (Celery: the ack, the next
    message, and any wait for one), within one job. A task runs one shard, or a chain of its job's
    shards, each after the one before is stored (`services.running.execute_shard`): a chained shard's claim
    is part of the store before it."""
    parts = {"claim": 0.0, "walk": 0.0, "histogram": 0.0, "run, other": 0.0, "store": 0.0}
    parts |= {"dispatch": 0.0, "between": 0.0}
    by_process: dict[tuple[int, str], list[dict]] = {}
    by_task: dict[str, list[dict]] = {}
    for t in timings:
        walk, histogram = t.get("walk_ms", 0.0), t.get("histogram_ms", 0.0)
        parts["claim"] += t["claim_ms"] / 1000
        parts["walk"] += walk / 1000
        parts["histogram"] += histogram / 1000
        parts["run, other"] += (t["run_ms"] - walk - histogram) / 1000
        parts["store"] += t["store_ms"] / 1000
        t["task_ended"] = t["ended"]
        if "task_s" in t:
            by_task.setdefault(t["task"], []).append(t)
        by_process.setdefault((t["pid"], t["job"]), []).append(t)  # no gap between two jobs
    for chain in by_task.values():  # the task's time less its shards' span
        chain.sort(key=lambda t: t["began"])
        first, last = chain[0], chain[-1]
        last["task_ended"] = max(last["ended"], first["began"] + first["task_s"])
        parts["dispatch"] += last["task_ended"] - last["ended"]
    for runs in by_process.values():
        runs.sort(key=lambda t: t["began"])
        parts["between"] += sum(b["began"] - a["task_ended"] for a, b in zip(runs, runs[1:], strict=False))
    return parts


def serial_parts(result: dict) -> str:
    """What a job spends outside its shards, from the client's clock and the workers' timing lines (one
    machine's clock): submit → the first shard's start (the planning, the first messages), and the last
    shard's store → the success the client sees (the finalize, the poll's wake-up)."""
    timings = result["timings"]
    first = min(t["began"] for t in timings) - result["submitted"]
    last = result["succeeded"] - max(t["ended"] for t in timings)
    return f"submit → first shard {first:.2f} s; last shard stored → succeeded seen {last:.2f} s"


def _walk_wall(mode_name: str, keys: list[str]) -> float:
    started = time.perf_counter()
    walk_shards(MODES[mode_name], keys)
    return time.perf_counter() - started


def _walk_in(processes: int, mode: Mode, keys: list[str]) -> float:
    """Wall seconds for `processes` fresh processes to walk `keys` dealt out in turn (each its own solver,
    built before the clock starts: a process walks the first shard once untimed)."""
    hands = [keys[i::processes] for i in range(processes)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        pool.starmap(_walk_wall, [(mode.name, hand[:1]) for hand in hands])  # each builds its solver
        started = time.perf_counter()
        pool.starmap(_walk_wall, [(mode.name, hand) for hand in hands])
        return time.perf_counter() - started


def ceiling(mode: Mode, counts: list[int], rounds: int) -> None:
    keys, _ = plan(mode, planetx.DEFAULT_SHARD_DEPTH[mode.name])
    print(f"4. the walk alone, {len(keys)} shards dealt out to N processes (no service), {rounds} rounds:")
    seconds: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(rounds):
        for n in counts:
            seconds[n].append(_walk_in(n, mode, keys))
    base = statistics.median(seconds[min(counts)])
    for n in counts:
        turns = ", ".join(f"{seconds[min(counts)][i] / t:.2f}×" for i, t in enumerate(seconds[n]))
        median = statistics.median(seconds[n])
        speed_up = f"{base / median:.2f}× {min(counts)}"
        print(f"   {n} processes: median {median:.2f} s = {speed_up}; by round {turns}")


class WaitSampler:
    """What PostgreSQL's busy sessions are doing, sampled every few milliseconds from `pg_stat_activity`
    in a thread of its own while the job runs: per wait event (CPU where none), the mean number of
    sessions in it. Shows whether the shards' stores queue on a lock (a row's: `Lock/tuple`,
    `Lock/transactionid`) or share the cores."""

    STATEMENT_HEAD = 70

    def __init__(self, database_url: str, every: float = 0.005) -> None:
        self.engine = sqlalchemy.create_engine(database_url, poolclass=sqlalchemy.pool.NullPool)
        self.every, self.samples = every, 0
        self.seen: collections.Counter[str] = collections.Counter()
        #: per (wait event, the statement's first words): the waits' statements
        self.statements: collections.Counter[tuple[str, str]] = collections.Counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> WaitSampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.engine.dispose()

    def _sample(self) -> None:
        query = (
            "SELECT coalesce(wait_event_type || '/' || wait_event, 'CPU'),"
            f" left(regexp_replace(query, '\\s+', ' ', 'g'), {self.STATEMENT_HEAD}), count(*)"
            " FROM pg_stat_activity"
            " WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
            " GROUP BY 1, 2"
        )
        with self.engine.connect() as connection:
            while not self.stop.wait(self.every):
                for event, statement, count in connection.exec_driver_sql(query).all():
                    self.seen[event] += count
                    self.statements[event, statement] += count
                self.samples += 1
                connection.rollback()

    def report(self) -> None:
        busy = sum(self.seen.values()) / max(self.samples, 1)
        print(f"   PostgreSQL's active sessions ({self.samples} samples): {busy:.2f} on average, of which")
        for event, count in self.seen.most_common(8):
            print(f"     {event:28s} {count / max(self.samples, 1):6.3f}")
        print("   the statements waiting on a lock, the most often first:")
        locks = [(key, count) for key, count in self.statements.most_common() if key[0].startswith("Lock/")]
        for (event, statement), count in locks[:8]:
            print(f"     {event:28s} {count / max(self.samples, 1):6.3f}  {statement}")


def service(
    mode: Mode, workers: int, runs: int, shard_depths: list[int], up: bool, waits: bool = False
) -> dict[str, float]:
    """Part 3 for one number of solver processes; returns the first depth's medians and per-shard split
    (for the scaling table). `waits`: also sample what PostgreSQL's sessions wait on (`WaitSampler`)."""
    summary: dict[str, float] = {}
    how = "zolve up" if up else "an API and one worker"
    print(f"3. through the service ({how}), {workers} solver processes, submit → stored → CSV exported:")
    with UpStack(workers=workers) if up else Stack(api_workers=1) as stack:
        if up:  # its children log to its stderr
            log = stack.log_path
        else:
            stack.start_worker(concurrency=workers)
            log = Path(stack.tmp.name) / "worker.log"
        for depth in shard_depths:
            results = []
            for _ in range(runs):
                before = yardstick()
                with WaitSampler(stack.database_url) if waits else contextlib.nullcontext() as sampler:
                    result = through_service(stack, mode.name, depth)
                if sampler is not None:
                    sampler.report()
                result["yardstick"] = before
                result["total"] = result["stored"] + result["export"]
                result["timings"] = shard_timings(log, result["id"])
                results.append(result)
                print(
                    f"   depth {depth}: yardstick {before:.2f} s; stored {result['stored']:.1f} s +"
                    f" export {result['export']:.1f} s = {result['total']:.1f} s"
                    f" = {result['total'] / before:.1f}x the yardstick; {result['count']:,} boards;"
                    f" {len(result['timings'])} shards; {load()}",
                    flush=True,
                )
                print(f"     {serial_parts(result)}")
            total = statistics.median(r["total"] for r in results)
            multiple = statistics.median(r["total"] / r["yardstick"] for r in results)
            counts = sorted({r["count"] for r in results})
            stored = statistics.median(r["stored"] for r in results)
            ruler = statistics.median(r["yardstick"] for r in results)
            print(
                f"   depth {depth}: median {total:.1f} s (stored {stored:.1f} s) = {counts[-1] / total:,.0f}"
                f" boards/s; {multiple:.1f}x the yardstick, median (yardstick median {ruler:.2f} s)"
                f"; counts {counts}"
            )
            shards = sum(len(r["timings"]) for r in results)
            parts = split([t for r in results for t in r["timings"]])
            busy = sum(parts.values())
            print(
                f"   worker time per shard, depth {depth} ({shards} shard runs, {runs} jobs, all processes):"
            )
            for name, seconds in parts.items():
                print(
                    f"     {name:11s} {seconds / shards * 1000:7.1f} ms  {seconds / busy:5.1%}"
                    f"  ({seconds / runs:5.1f} s of worker time per job)"
                )
            if not summary:
                export = statistics.median(r["export"] for r in results)
                summary = {"stored": stored, "export": export, "total": total, "boards": counts[-1]}
                summary |= {f"{name} ms": seconds / shards * 1000 for name, seconds in parts.items()}
    return summary


def scaling_table(summaries: dict[int, dict[str, float]]) -> None:
    """The runs side by side: each number of solver processes against the first (the baseline of the
    same run), and what a shard costs besides its walk (claim, store, dispatch and the gap between tasks)
    as a share of the walk."""
    first = summaries[min(summaries)]
    print(
        "\n| solver processes | stored | CSV export | submit → exported | speed-up | per shard (ms): walk /"
        " store / dispatch / claim / between | overhead / walk |"
    )
    print("|---|---|---|---|---|---|---|")
    for workers, s in sorted(summaries.items()):
        overhead = s["claim ms"] + s["store ms"] + s["dispatch ms"] + s["between ms"]
        parts = ("walk", "store", "dispatch", "claim", "between")
        split = " / ".join(f"{s[f'{part} ms']:.1f}" for part in parts)
        rate = s["boards"] / s["export"]
        print(
            f"| {workers} | {s['stored']:.1f} s | {s['export']:.1f} s ({rate:,.0f} boards/s)"
            f" | {s['total']:.1f} s | {first['total'] / s['total']:.2f}× | {split}"
            f" | {overhead / s['walk ms']:.0%} |"
        )


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(run[name] for run in runs) for name in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="expert", choices=list(MODES))
    parser.add_argument("--depth", type=int, default=4, help="shard depth of part 1")
    parser.add_argument("--old-every", type=int, default=8, help="the blocking loop runs every Nth shard")
    parser.add_argument("--depths", default="3,4,5", help="part 2's depths ('' skips it)")
    parser.add_argument("--service-runs", type=int, default=1, help="0 skips part 3")
    parser.add_argument("--workers", default="2", help="solver processes: a count, or a list (1,2,4,...)")
    parser.add_argument(
        "--service", choices=["up", "stack"], default="up", help="part 3: zolve up, or an API and one worker"
    )
    parser.add_argument("--repeat", type=int, default=3, help="part 1: best of N interleaved runs (0: skip)")
    parser.add_argument("--service-depths", default="4,5", help="part 3: the shard depths to run")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="part 3: the worker counts take turns this many times; the table gives each figure's median",
    )
    parser.add_argument(
        "--ceiling", type=int, default=0, help="part 4: rounds of the walk alone in 1..N processes (0 skips)"
    )
    parser.add_argument(
        "--waits", action="store_true", help="part 3: sample what PostgreSQL's busy sessions wait on"
    )
    args = parser.parse_args()
    mode = MODES[args.mode]
    print(f"z3 {z3.get_version_string()}; {os.cpu_count()} cores; {load()}")
    print(
        f"0. yardstick ({YARDSTICK_ROUNDS} plain-Python counts of the standard boards): {yardstick():.2f} s"
    )
    if args.repeat:
        in_process(mode, args.depth, args.old_every, args.repeat)
        print(f"   {load()}; yardstick now {yardstick():.2f} s")
    if args.depths:
        depths(mode, [int(d) for d in args.depths.split(",")])
    if args.service_runs:
        depths_run = [int(d) for d in args.service_depths.split(",")]
        counts = [int(n) for n in args.workers.split(",")]
        up = args.service == "up"
        rounds: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
        for _ in range(args.rounds):  # in turns: a swing of the machine's speed falls on every count
            for n in counts:
                rounds[n].append(service(mode, n, args.service_runs, depths_run, up=up, waits=args.waits))
        summaries = {n: _medians(runs) for n, runs in rounds.items()}
        if len(counts) > 1:
            scaling_table(summaries)
            base = rounds[min(counts)]
            for n in sorted(counts)[1:]:
                pairs = zip(base, rounds[n], strict=True)
                turns = ", ".join(f"{one['total'] / many['total']:.2f}×" for one, many in pairs)
                print(f"speed-up of {n} processes in each round: {turns}")
    if args.ceiling:
        ceiling(mode, [int(n) for n in args.workers.split(",")], args.ceiling)


if __name__ == "__main__":
    main()
