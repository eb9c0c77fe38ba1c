"""For benchmarks that compare this checkout with a baseline revision in one run: the baseline checked out
in a temporary git worktree, and a script run in either tree that prints its figures as JSON on its last
line."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def worktree(revision: str, under: Path) -> Iterator[Path]:
    """`revision` checked out in `under`/baseline, removed afterwards."""
    tree = under / "baseline"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(tree), revision], cwd=ROOT, check=True, capture_output=True
    )
    try:
        yield tree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


def measured_in(tree: Path, script: Path, args: list[str]) -> dict[str, Any]:
    """The figures `script` (a path inside `tree`) prints as JSON on its last line, run in `tree` on its own
    code (and its client library's)."""
    environment = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'client'}"}
    return figures_of([sys.executable, str(script), *args], tree, environment)


def figures_of(command: list[str], tree: Path, environment: dict[str, str]) -> dict[str, Any]:
    """What `command`, run in `tree`, prints as JSON on its last line."""
    done = subprocess.run(command, cwd=tree, env=environment, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring {tree} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


#: Python source for a `measured_by` snippet (after its imports of json, time and `simulate`): whole games
#: timed, the games of `warm` played first and the policy's cached decisions dropped before the clock starts
TIMED_GAMES = """
def timed_games(everything, run, params, games, warm):
    setup, spaces = simulate.Setup.of(params), simulate.conference_spaces(params)

    def days(index):
        secret = simulate.secret_of(params, index, len(everything))
        seeds = [params["seed"], index]
        return simulate.play(everything, secret, "research", run, 300, seeds, spaces, setup)["days"]

    for index in warm:
        days(index)
    simulate._decisions.clear()
    began = time.perf_counter()
    played = [days(index) for index in range(games)]
    return time.perf_counter() - began, played
"""


def measured_by(tree: Path, code: str, args: list[str]) -> dict[str, Any]:
    """The figures `code` (Python source, run in `tree` on its own code, numpy on one thread) prints as JSON
    on its last line."""
    environment = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    return figures_of([sys.executable, "-c", code, *args], tree, environment)


Runs = dict[str, list[dict[str, Any]]]


def taking_turns(baseline: str, code: str, args: list[str], rounds: int, parts: list[str]) -> Runs:
    """`code`'s figures (`measured_by`), each round in a worktree of `baseline` and then in this checkout;
    the seconds of `parts` printed as each run ends."""
    runs: Runs = {"baseline": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp, worktree(baseline, Path(tmp)) as tree:
        for round_ in range(rounds):
            for name, where in (("baseline", tree), ("this", ROOT)):
                last = measured_by(where, code, args)
                runs[name].append(last)
                took = "  ".join(f"{part} {last[part]:7.2f} s" for part in parts)
                print(f"  round {round_ + 1} {name:8} {took}", flush=True)
    return runs


def print_medians(runs: Runs, parts: dict[str, str]) -> None:
    """Per part (its label the value), the median seconds in either tree and the speed-up."""
    for part, what in parts.items():
        before = statistics.median(r[part] for r in runs["baseline"])
        after = statistics.median(r[part] for r in runs["this"])
        print(f"  {what:21} baseline {before:7.2f} s  this {after:7.2f} s  {before / after:5.2f}x")
