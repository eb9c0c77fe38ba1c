"""Planet X expert enumeration, all in one run on this machine, as ratios:

1. the seed's method: one Z3 solver for the whole board (a BitVec per sector), a blocking clause after
   every model; its rate over the first 1k / 10k / 50k models (it decays; it is not run to the end);
2. zolve end to end (submit → every board stored in PostgreSQL) with 1 and with 2 worker processes,
   plus the per-shard Z3 rate of the first and the last shards;
3. the plain-Python combinatorial enumerator.

    .venv/bin/python bench/planetx_enumerate.py [--seed-models 50000] [--mode expert]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import requests
import z3
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack  # noqa: E402
from puzzles.planetx import enumerate as planetx  # noqa: E402
from puzzles.planetx.board import ASTEROID, COMET, DWARF_PLANET, EMPTY, GAS_CLOUD, MODES, PLANET_X, Mode  # noqa: E402
from puzzles.planetx.rules import enumerate_boards  # noqa: E402
from puzzles.runtime import Run  # noqa: E402
from store.models import Shard  # noqa: E402


def seed_method(mode: Mode, checkpoints: list[int]) -> dict[int, float]:
    """The seed's encoding: a BitVec per sector, counts by Sum(If(...)), a blocking clause per model."""
    n = mode.sectors
    sectors = [z3.BitVec(f"s{i}", 3) for i in range(n)]
    solver = z3.Solver()
    for s in sectors:
        solver.add(z3.ULE(s, 5))
    for obj, count in enumerate(mode.counts):
        solver.add(z3.Sum([z3.If(s == obj, 1, 0) for s in sectors]) == count)
    for i, s in enumerate(sectors):
        left, right = sectors[i - 1], sectors[(i + 1) % n]
        if i + 1 not in mode.primes:
            solver.add(s != COMET)
        solver.add(z3.Implies(s == ASTEROID, z3.Or(left == ASTEROID, right == ASTEROID)))
        solver.add(z3.Implies(s == GAS_CLOUD, z3.Or(left == EMPTY, right == EMPTY)))
        solver.add(z3.Implies(s == PLANET_X, z3.And(left != DWARF_PLANET, right != DWARF_PLANET)))
    if mode.dwarf_band:
        w = mode.dwarf_band
        solver.add(
            z3.Or(
                [
                    z3.And(
                        sectors[a] == DWARF_PLANET,
                        sectors[(a + w - 1) % n] == DWARF_PLANET,
                        *[sectors[j] != DWARF_PLANET for j in range(n) if (j - a) % n >= w],
                    )
                    for a in range(n)
                ]
            )
        )
    rates, found, started = {}, 0, time.perf_counter()
    while found < max(checkpoints) and solver.check() == z3.sat:
        model = solver.model()
        solver.add(z3.Or([s != model[s] for s in sectors]))
        found += 1
        if found in checkpoints:
            rates[found] = found / (time.perf_counter() - started)
    return rates


def through_service(stack: Stack, mode: str, workers: int) -> tuple[float, int, list[tuple[float, float]]]:
    """Submit → succeeded; returns (seconds, boards, per-shard (finish time, boards/s))."""
    stack.start_worker(concurrency=workers)
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {stack.key}"
    started = time.perf_counter()
    body = {"kind": "planetx.enumerate", "params": {"mode": mode}, "fresh": True}
    job = http.post(stack.url + "/jobs", json=body).json()
    while job["state"] not in ("succeeded", "failed", "cancelled"):
        job = http.get(f"{stack.url}/jobs/{job['id']}?wait=30").json()
    seconds = time.perf_counter() - started
    assert job["state"] == "succeeded", job
    with stack.db.session() as session:
        shards = session.execute(
            select(Shard.finished_at, Shard.row_count, Shard.solve_seconds)
            .where(Shard.job_id == job["id"], Shard.state == "succeeded")
            .order_by(Shard.finished_at)
        ).all()
    stack.stop_worker()
    per_shard = [(f.timestamp(), rows / secs) for f, rows, secs in shards if secs and rows >= 500]
    return seconds, job["result"]["count"], per_shard


def profile_one_shard(mode_name: str) -> list[tuple[str, float]]:
    """Where a large shard's time goes, by part, from cProfile."""
    params, mode = {"mode": mode_name}, MODES[mode_name]
    with Run(600) as run:
        keys = planetx.plan(params, run)
        prefix = lambda key: ["EXGDAC".index(ch) for ch in key]  # noqa: E731
        key = next((k for k in keys if len(enumerate_boards(mode, prefix=prefix(k))) > 4000), keys[0])
        profile = cProfile.Profile()
        profile.enable()
        planetx.run_shard(params, key, run)
        profile.disable()
    stats = pstats.Stats(profile)
    parts = {
        "Z3 check()": [("z3core.py", "Z3_solver_check_assumptions"), ("z3core.py", "Z3_solver_check")],
        "Z3 model construction": [("z3core.py", "Z3_solver_get_model")],
        "reading the board (model eval)": [
            ("z3core.py", "Z3_model_eval"),
            ("z3core.py", "Z3_get_numeral_string"),
        ],
        "blocking clauses": [("z3core.py", "Z3_mk_or"), ("z3core.py", "Z3_solver_assert")],
        "fresh solver + rules": [("solver.py", "__init__")],
        "histogram (Python)": [("enumerate.py", "histogram")],
    }
    shares = []
    for label, functions in parts.items():
        seconds = sum(
            v[3]
            for (file, _, fn), v in stats.stats.items()
            if any(file.endswith(f) and fn == n for f, n in functions)
        )
        shares.append((label, seconds / stats.total_tt))
    shares.append(("other Python", 1 - sum(share for _, share in shares)))
    return shares


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="expert", choices=list(MODES))
    parser.add_argument("--seed-models", type=int, default=50_000)
    parser.add_argument("--workers", default="1,2", help="worker process counts to run, e.g. 2")
    args = parser.parse_args()
    mode = MODES[args.mode]

    checkpoints = [c for c in (1_000, 10_000, 50_000) if c <= args.seed_models] or [args.seed_models]
    seed = seed_method(mode, checkpoints)
    started = time.perf_counter()
    count = len(enumerate_boards(mode))
    combinatorial = count / (time.perf_counter() - started)
    with Stack(api_workers=1) as stack:
        counts = [int(n) for n in args.workers.split(",")]
        results = {workers: through_service(stack, args.mode, workers) for workers in counts}
    shares = profile_one_shard(args.mode)

    seed_rate = seed[max(seed)]
    print(f"Planet X {args.mode}: {count:,} boards")
    for n, rate in seed.items():
        print(f"  seed method, first {n:>6,} models : {rate:9,.0f} boards/s")
    for workers, (seconds, boards, _) in results.items():
        rate = boards / seconds
        print(
            f"  zolve, {workers} worker process(es)  : {rate:9,.0f} boards/s, stored,"
            f" {seconds:6.1f} s end to end = {rate / seed_rate:5.1f}x seed"
        )
    ratio = combinatorial / seed_rate
    print(f"  combinatorial enumerator       : {combinatorial:9,.0f} boards/s = {ratio:5.1f}x seed")
    most = max(results)
    rates = {w: boards / seconds for w, (seconds, boards, _) in results.items()}
    if 1 in rates and most > 1:
        print(f"  {most} workers / 1 worker = {rates[most] / rates[1]:.2f}x")
    print(
        f"  gap to the combinatorial limit: combinatorial / zolve {most} workers"
        f" = {combinatorial / rates[most]:.2f}x"
    )
    per_shard = results[most][2]
    tenth = max(1, len(per_shard) // 10)
    first = sum(r for _, r in per_shard[:tenth]) / tenth
    last = sum(r for _, r in per_shard[-tenth:]) / tenth
    print(f"  per-shard Z3 rate: first 10% of shards {first:,.0f}/s, last 10% {last:,.0f}/s")
    print(f"  last / first = {last / first:.2f}x")
    print("  one shard's time, by part (cProfile):")
    for label, share in shares:
        print(f"    {label:32s} {share:6.1%}")


if __name__ == "__main__":
    main()
