"""The longest test modules first, so that `make test`'s parallel run (pytest-xdist, `-n` with `--dist
loadfile`: each module whole on one process, in the order collected) starts them at once instead of
leaving one of them to run alone at the end.

LONGEST_FIRST is measured, not guessed: the modules that took longest in a `make test` on a 2-core machine
(`pytest -n 3 --durations=0`, summed per file), longest first. Every other module follows in its usual
order, and the tests of a module keep theirs. A module missing from the list costs only balance, never a
failure; one that grows past a minute belongs in it.
"""

from __future__ import annotations

import pytest

LONGEST_FIRST = (
    "tests/test_image.py",  # the longest on a machine that has not built the image yet
    "tests/test_cli.py",
    "tests/api/test_fuzz.py",
    "tests/test_bench_soak.py",  # the soak, with its stack and drain
    "tests/workers/test_recovery.py",
    "tests/multihost/test_partitions.py",
    "tests/security/test_edge.py",
    "tests/workers/test_lost_messages.py",
    "tests/multihost/test_power.py",
    "tests/security/test_slow_clients.py",
    "tests/workers/test_planetx_expert.py",
    "tests/puzzles/test_planetx_enumerate.py",
    "tests/workers/test_fair_share.py",
    "tests/test_supervisor.py",
    "tests/puzzles/test_mastermind_third.py",
    "tests/puzzles/test_mastermind.py",
    "tests/workers/test_shard_chains.py",
    "tests/workers/test_faults.py",
    "tests/puzzles/test_mastermind_optimal.py",
)
_RANK = {path: rank for rank, path in enumerate(LONGEST_FIRST)}


@pytest.hookimpl(trylast=True)  # after tests/tiers.py and the plugins: only the order changes here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: _RANK.get(item.nodeid.split("::", 1)[0], len(LONGEST_FIRST)))
