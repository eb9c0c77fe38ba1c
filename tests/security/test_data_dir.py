"""Issue 37 ("Also seen"): the embedded servers' data directory is not readable by other users: it holds
the dashboard's signing key, Redis's log and PostgreSQL's data. Only traversal is left to others when the
embedded PostgreSQL runs as a user of its own (we are root), which must reach its data below."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from zolve.embedded import EmbeddedServices


def _others_may(path: Path) -> int:
    """The group's and others' read and write bits on the path."""
    return stat.S_IMODE(path.stat().st_mode) & 0o066


def test_the_data_directory_is_private_once_the_servers_run() -> None:
    data = Path(tempfile.mkdtemp(prefix="zolve-private-")) / "data"
    services = EmbeddedServices(data)
    try:
        services.start()
        assert _others_may(data) == 0, oct(data.stat().st_mode)
        assert stat.S_IMODE((data / "redis").stat().st_mode) & 0o077 == 0
        if os.getuid() != 0:
            assert stat.S_IMODE(data.stat().st_mode) & 0o077 == 0
    finally:
        services.stop()
        shutil.rmtree(data.parent, ignore_errors=True)
