"""Every registered kind's solver reference ("module:function") resolves, and a sharded kind's module is a
`puzzles.sharding.ShardedPuzzle` (plan, run_shard, combine, with the protocol's parameters): a broken
reference fails here, in the fast tier, not first in a worker."""

from __future__ import annotations

import inspect

import pytest

from kinds import KINDS
from puzzles.sharding import ShardedPuzzle


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_kinds_solver_imports_and_takes_params_and_a_run(name: str) -> None:
    solve = KINDS[name].solve_function()
    assert callable(solve)
    assert len(_parameters(solve)) == 2, "solve(params, run)"


@pytest.mark.parametrize("name", sorted(name for name, kind in KINDS.items() if kind.sharded))
def test_a_sharded_kind_is_a_sharded_puzzle(name: str) -> None:
    puzzle = KINDS[name].puzzle()
    assert isinstance(puzzle, ShardedPuzzle)
    for method in ("plan", "run_shard", "combine"):
        expected = [p for p in _parameters(getattr(ShardedPuzzle, method)) if p != "self"]
        assert _parameters(getattr(puzzle, method)) == expected, f"{name}: {method}{tuple(expected)}"


def test_the_sharded_puzzle_check_refuses_a_module_without_combine() -> None:
    class Incomplete:
        def plan(self, params: dict, run: object) -> list[str]:
            return []

        def run_shard(self, params: dict, key: str, run: object) -> None:
            return None

    assert not isinstance(Incomplete(), ShardedPuzzle)
    assert any(kind.sharded for kind in KINDS.values()), "the check above ran on at least one kind"
