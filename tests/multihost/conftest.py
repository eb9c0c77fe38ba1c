"""The multi-host tests: each test gets a cluster of its own (tests/multihost/cluster.py), torn down after
it whatever happens, namespaces and processes included. Each module marks itself `integration`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.multihost.cluster import Cluster


def open_cluster(workdir: Path) -> Cluster:
    try:
        return Cluster(workdir).__enter__()
    except RuntimeError as exc:  # no namespaces here: say so, never skip
        pytest.fail(f"cannot build the multi-host cluster: {exc}", pytrace=False)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    own = open_cluster(tmp_path)
    try:
        yield own
    finally:
        own.close()
