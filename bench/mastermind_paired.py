"""Paired Mastermind runs: the same random secrets, two versions of the code, the difference per secret.

    .venv/bin/python bench/mastermind_paired.py play --n 6 --k 9 --secrets-seed 1 --count 3000 --out A.json
    (change the code, then the same with --out B.json)
    .venv/bin/python bench/mastermind_paired.py compare A.json B.json

`play` plays `best` (in process on every core, as bench/mastermind.py) and stores every game's turns and the
CPU seconds of the play processes; `compare` prints both averages over the secrets both played and the mean
difference (B − A) with its 95% interval (normal approximation). Pairing removes most of the secrets' own
spread, so a small change shows with fewer games than two separate averages need.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

from puzzles.mastermind import games
from puzzles.runtime import Run


def play(n: int, k: int, secrets_seed: int, count: int, out: str) -> None:
    secrets = games.secrets_of({"n": n, "k": k, "secrets": {"sample": count, "seed": secrets_seed}})
    started = time.perf_counter()
    with Run() as run:
        result = games.play({"n": n, "k": k, "strategy": "best", "secrets": [list(s) for s in secrets]}, run)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, turns = usage.ru_utime + usage.ru_stime, [game["turns"] for game in result["games"]]
    mean, half = statistics.fmean(turns), 1.96 * statistics.stdev(turns) / len(turns) ** 0.5
    print(
        f"{n}x{k} seed {secrets_seed}: {len(turns)} games, avg {mean:.4f} ±{half:.4f}, "
        f"{time.perf_counter() - started:.0f} s wall, {cpu / len(turns):.3f} CPU s/game"
    )
    with open(out, "w") as file:
        json.dump({"games": result["games"], "cpu_seconds": cpu}, file)


def compare(before: str, after: str) -> None:
    turns = []
    for path in (before, after):
        with open(path) as file:
            turns.append({tuple(g["secret"]): g["turns"] for g in json.load(file)["games"]})
    shared = [secret for secret in turns[0] if secret in turns[1]]
    differences = [turns[1][s] - turns[0][s] for s in shared]
    half = 1.96 * statistics.stdev(differences) / len(shared) ** 0.5
    averages = [statistics.fmean(side[s] for s in shared) for side in turns]
    changed = sum(1 for d in differences if d)
    print(
        f"{len(shared)} secrets: before {averages[0]:.4f}, after {averages[1]:.4f}, difference "
        f"{statistics.fmean(differences):+.4f} ±{half:.4f} (95%), {changed} games changed"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    player = commands.add_parser("play")
    player.add_argument("--n", type=int, default=6)
    player.add_argument("--k", type=int, default=9)
    player.add_argument("--secrets-seed", type=int, default=1)
    player.add_argument("--count", type=int, default=3_000)
    player.add_argument("--out", required=True)
    comparer = commands.add_parser("compare")
    comparer.add_argument("before")
    comparer.add_argument("after")
    args = parser.parse_args()
    if args.command == "play":
        play(args.n, args.k, args.secrets_seed, args.count, args.out)
    else:
        compare(args.before, args.after)


if __name__ == "__main__":
    main()
