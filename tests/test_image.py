"""The deployment as it ships: `make test-image` (scripts/image/test_image.py) builds the image and runs
docker-compose.yml's services and the Kubernetes manifests from it, with one job of every kind GET /kinds
names and a worker killed mid-shard. Part of `make test` wherever it can run: as root, with podman (or
apt-get to install it: scripts/image/tools.sh), as on the project's machines; skipped elsewhere, saying
why. About a minute with the image built, four on a fresh machine."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.support import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]


def _why_not_here() -> str | None:
    if os.geteuid() != 0:
        return "make test-image needs root (network namespaces, podman, apt-get): run make test as root"
    if shutil.which("podman") is None and shutil.which("apt-get") is None:
        return "make test-image needs podman, or apt-get to install it"
    return None


def test_the_image_runs_compose_and_kubernetes_with_every_kind() -> None:
    if (why := _why_not_here()) is not None:
        pytest.skip(why)
    done = subprocess.run(["make", "test-image"], cwd=ROOT, capture_output=True, text=True, timeout=1750)
    assert done.returncode == 0, f"make test-image failed:\n{done.stdout[-6000:]}\n{done.stderr[-4000:]}"
    assert "compose deployment: every check passed" in done.stdout + done.stderr
