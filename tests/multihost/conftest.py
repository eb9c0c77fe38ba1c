"""The multi-host tests: each test gets a cluster of its own (tests/multihost/cluster.py), torn down after
it whatever happens, namespaces and processes included. Each module marks itself `integration`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.multihost.cluster import Cluster


def open_cluster(workdir: Path) -> Cluster:
    """A cluster; skipped, with the reason, where it cannot be had by design (not root: no network
    namespaces), but failed where it should be had and is not (as root: CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("the multi-host tests need root (network namespaces and veth pairs: `ip netns`)")
    try:
        return Cluster(workdir).__enter__()
    except RuntimeError as exc:
        pytest.fail(f"cannot build the multi-host cluster: {exc}", pytrace=False)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    own = open_cluster(tmp_path)
    try:
        yield own
    finally:
        own.close()
