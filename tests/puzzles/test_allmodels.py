"""The user-propagator model walk on small problems whose models are known by counting."""

import threading
import time
from itertools import product

import pytest
import z3

from puzzles import allmodels
from puzzles.allmodels import ModelWalker, PropagatorError, propagator_solver
from puzzles.runtime import Cancelled, Run, TimeLimitExceeded


def one_hot_grid(ctx: z3.Context, cells: int, values: int) -> tuple[z3.Solver, list[list[z3.BoolRef]]]:
    """`cells` cells, each holding one of `values` values: one-hot literals, no other rule yet."""
    solver = propagator_solver(ctx)
    grid = [[z3.Bool(f"c{c}v{v}", ctx) for v in range(values)] for c in range(cells)]
    for row in grid:
        solver.add(z3.PbEq([(lit, 1) for lit in row], 1))
    return solver, grid


def walker_for(solver: z3.Solver, grid: list[list[z3.BoolRef]], values: int) -> ModelWalker:
    """A model's value: the cells' values as the digits of a base-`values` number."""
    literals = [(lit, v * values**c) for c, row in enumerate(grid) for v, lit in enumerate(row)]
    return ModelWalker(solver, literals, len(grid))


def expected(cells: int, values: int, keep: object) -> list[int]:
    return sorted(
        sum(v * values**c for c, v in enumerate(assignment))
        for assignment in product(range(values), repeat=cells)
        if keep(assignment)  # type: ignore[operator]
    )


def test_walks_every_model_once_and_again_after_pop() -> None:
    ctx = z3.Context()
    solver, grid = one_hot_grid(ctx, 5, 3)
    solver.add(z3.Or(grid[0][0], grid[4][2]))  # cell 0 is 0 or cell 4 is 2
    walker = walker_for(solver, grid, 3)
    want = expected(5, 3, lambda a: a[0] == 0 or a[4] == 2)
    with Run(60) as run:
        for _ in range(3):  # the scope of each walk is popped: the next walk sees every model again
            walk = walker.walk(run)
            assert walk.complete and sorted(walk.values) == want and len(set(walk.values)) == len(want)


def test_facts_hold_for_one_walk_only() -> None:
    ctx = z3.Context()
    solver, grid = one_hot_grid(ctx, 4, 4)
    walker = walker_for(solver, grid, 4)
    with Run(60) as run:
        narrowed = walker.walk(run, [grid[1][3], z3.Not(grid[2][0])])
        whole = walker.walk(run)
    assert sorted(narrowed.values) == expected(4, 4, lambda a: a[1] == 3 and a[2] != 0)
    assert sorted(whole.values) == expected(4, 4, lambda a: True)


def test_a_walk_over_some_cells_finds_each_of_their_assignments_once() -> None:
    """Literals of the first cells only: the walk is a projection, each prefix blocked whole once found."""
    ctx = z3.Context()
    solver, grid = one_hot_grid(ctx, 5, 3)
    solver.add(z3.Or(grid[0][1], grid[3][2]), z3.Implies(grid[1][0], grid[4][0]), z3.Not(grid[2][1]))
    walker = walker_for(solver, grid[:2], 3)
    with Run(60) as run:
        walk = walker.walk(run)
    models = expected(5, 3, lambda a: (a[0] == 1 or a[3] == 2) and (a[1] != 0 or a[4] == 0) and a[2] != 1)
    assert walk.complete and sorted(walk.values) == sorted({m % 9 for m in models})


def test_a_cap_stops_the_walk_incomplete() -> None:
    ctx = z3.Context()
    solver, grid = one_hot_grid(ctx, 4, 4)
    walker = walker_for(solver, grid, 4)
    with Run(60) as run:
        capped = walker.walk(run, cap=10)
        exact = walker.walk(run, cap=256)
    assert not capped.complete and len(set(capped.values)) == 10
    assert set(capped.values) <= set(expected(4, 4, lambda a: True))
    assert exact.complete and len(exact.values) == 256


def big_walker(ctx: z3.Context) -> tuple[ModelWalker, list[list[z3.BoolRef]]]:
    """14 cells of 4 values: 268 million models, far more than any test waits for."""
    solver, grid = one_hot_grid(ctx, 14, 4)
    return walker_for(solver, grid, 4), grid


def test_a_deadline_interrupts_a_walk_and_the_solver_stays_usable() -> None:
    ctx = z3.Context()
    walker, grid = big_walker(ctx)
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded), Run(0.5) as run:
        walker.walk(run)
    assert time.monotonic() - started < 3
    with Run(60) as run:  # every cell 0 but the last two
        walk = walker.walk(run, [row[0] for row in grid[:12]])
    assert walk.complete and len(walk.values) == 16


def test_cancel_interrupts_a_walk_from_another_thread() -> None:
    ctx = z3.Context()
    walker, _ = big_walker(ctx)
    with Run(60) as run:
        threading.Timer(0.3, run.stop).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            walker.walk(run)
    assert time.monotonic() - started < 3


def test_a_stopped_run_does_not_start_a_walk() -> None:
    ctx = z3.Context()
    solver, grid = one_hot_grid(ctx, 2, 2)
    walker = walker_for(solver, grid, 2)
    with Run(60) as run:
        run.stop()
        with pytest.raises(Cancelled):
            walker.walk(run)
    with Run(60) as run:  # a later run on the same long-lived solver is not hit by the old stop
        assert sorted(walker.walk(run).values) == [0, 1, 2, 3]


def test_the_conflict_through_z3cores_wrapper_walks_the_same_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback when libz3 is not the z3 package's own."""
    monkeypatch.setattr(allmodels, "_consequence", allmodels._wrapped_consequence)
    ctx = z3.Context()
    solver, grid = one_hot_grid(ctx, 4, 3)
    solver.add(z3.Not(grid[2][1]))
    with Run(60) as run:
        walk = walker_for(solver, grid, 3).walk(run)
    assert walk.complete and sorted(walk.values) == expected(4, 3, lambda a: a[2] != 1)


def test_a_model_with_the_wrong_number_of_true_literals_is_an_error() -> None:
    ctx = z3.Context()
    solver, grid = one_hot_grid(ctx, 3, 2)
    literals = [(row[1], 1 << c) for c, row in enumerate(grid)]  # not a count that holds in every model
    with Run(60) as run, pytest.raises(PropagatorError):
        ModelWalker(solver, literals, 3).walk(run)
