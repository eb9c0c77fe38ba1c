"""For benchmarks that compare this checkout with a baseline revision in one run: the baseline checked out
in a temporary git worktree, and a script run in either tree that prints its figures as JSON on its last
line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    done = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": f"{tree}:{tree / 'client'}"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"measuring {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measured_by(tree: Path, code: str, args: list[str]) -> dict[str, Any]:
    """The figures `code` (Python source, run in `tree` on its own code, numpy on one thread) prints as JSON
    on its last line."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"measuring {tree} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures
