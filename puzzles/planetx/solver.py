"""The placement rules as Z3 constraints, and model enumeration of one shard.

Encoding: one Boolean per (sector, object), exactly one object per sector and exact object counts as
pseudo-Boolean constraints. A shard fixes the objects of its first sectors and walks every board in one
check with Z3's user propagator (`puzzles.allmodels`), in a solver that the process keeps per mode and
facts. The check–model–block loop (`enumerate_models`, on `SolverFor("QF_FD")`) stays as the baseline.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass

import z3

from puzzles.allmodels import ModelWalker, propagator_solver
from puzzles.planetx.board import ASTEROID, BITS, COMET, DWARF_PLANET, EMPTY, GAS_CLOUD, MODES, PLANET_X, Mode
from puzzles.planetx.rules import Fact
from puzzles.runtime import Run


class BoardModel:
    """The rules of one mode in one Z3 context."""

    def __init__(
        self, mode: Mode, ctx: z3.Context, facts: Sequence[Fact] = (), solver: z3.Solver | None = None
    ):
        """`solver`: where the rules go (default: a new `SolverFor("QF_FD")` in `ctx`)."""
        self.mode, self.ctx = mode, ctx
        n = mode.sectors
        self.vars = [[z3.Bool(f"s{s}o{o}", ctx) for o in range(6)] for s in range(1, n + 1)]
        self.solver = solver if solver is not None else z3.SolverFor("QF_FD", ctx=ctx)
        self.solver.add(*self._rules())
        for sector, obj, present in facts:
            self.solver.add(self.at(sector, obj) if present else z3.Not(self.at(sector, obj)))

    def at(self, sector: int, obj: int) -> z3.BoolRef:
        return self.vars[sector - 1][obj]

    def _rules(self) -> list[z3.BoolRef]:
        mode, at = self.mode, self.at
        n = mode.sectors
        rules = [z3.PbEq([(v, 1) for v in row], 1) for row in self.vars]
        rules += [
            z3.PbEq([(at(s, obj), 1) for s in range(1, n + 1)], count)
            for obj, count in enumerate(mode.counts)
        ]
        for s in range(1, n + 1):
            left, right = mode.neighbours(s)
            if s not in mode.primes:
                rules.append(z3.Not(at(s, COMET)))
            rules.append(z3.Implies(at(s, ASTEROID), z3.Or(at(left, ASTEROID), at(right, ASTEROID))))
            rules.append(z3.Implies(at(s, GAS_CLOUD), z3.Or(at(left, EMPTY), at(right, EMPTY))))
            rules.append(
                z3.Implies(
                    at(s, PLANET_X), z3.And(z3.Not(at(left, DWARF_PLANET)), z3.Not(at(right, DWARF_PLANET)))
                )
            )
        if mode.dwarf_band:
            rules.append(self._dwarf_band())
        return rules

    def _dwarf_band(self) -> z3.BoolRef:
        """All dwarf planets in one band of exactly `dwarf_band` sectors, with dwarfs at both ends."""
        n, width, at = self.mode.sectors, self.mode.dwarf_band, self.at
        bands = []
        for start in range(1, n + 1):
            inside = {(start - 1 + k) % n + 1 for k in range(width)}
            end = (start + width - 2) % n + 1
            outside = [z3.Not(at(s, DWARF_PLANET)) for s in range(1, n + 1) if s not in inside]
            bands.append(z3.And(at(start, DWARF_PLANET), at(end, DWARF_PLANET), *outside))
        return z3.Or(bands)

    def fix(self, prefix: Sequence[int]) -> None:
        for index, obj in enumerate(prefix):
            self.solver.add(self.at(index + 1, obj))


class Enumerator:
    """The model-enumeration loop on Z3's C API: per model, one evaluation of a precomputed term that is
    the board's code, and one blocking clause built from pre-made negated literals. (Through the Python
    wrappers, object creation and reference counting cost ten times more than Z3's own search.)"""

    def __init__(self, model: BoardModel):
        self.model = model
        ctx = model.ctx
        self._ctx_ref = ctx.ref()
        self._solver_ref = model.solver.solver
        n = model.mode.sectors
        self._code_term = z3.Sum(
            [
                z3.If(row[obj], z3.IntVal(obj << (BITS * i), ctx), z3.IntVal(0, ctx))
                for i, row in enumerate(model.vars)
                for obj in range(1, 6)
            ]
        )
        self._negated = [[z3.Not(v) for v in row] for row in model.vars]  # kept alive: Z3 ref-counts
        self._negated_refs = [[lit.as_ast() for lit in row] for row in self._negated]
        self._code_ref = self._code_term.as_ast()
        self._clause = (z3.Ast * n)()
        self._value = (z3.Ast * 1)()

    def current_board(self) -> int:
        ctx_ref = self._ctx_ref
        model_ref = z3.Z3_solver_get_model(ctx_ref, self._solver_ref)
        z3.Z3_model_inc_ref(ctx_ref, model_ref)
        try:
            value = self._value
            if not z3.Z3_model_eval(ctx_ref, model_ref, self._code_ref, True, value):
                raise RuntimeError("Z3 could not evaluate the board")
            return int(z3.Z3_get_numeral_string(ctx_ref, value[0]))
        finally:
            z3.Z3_model_dec_ref(ctx_ref, model_ref)

    def check(self) -> int:
        """The solver's next check, bare: Z3_L_TRUE, Z3_L_FALSE or Z3_L_UNDEF. (`Run.check` sets the
        timeout parameter on every call, which costs more than a small check itself.)"""
        result: int = z3.Z3_solver_check(self._ctx_ref, self._solver_ref)
        return result

    def block(self, code: int) -> None:
        """Exclude this board from later models."""
        clause = self._clause
        for i, row in enumerate(self._negated_refs):
            clause[i] = row[(code >> (BITS * i)) & 7]
        z3.Z3_solver_assert(self._ctx_ref, self._solver_ref, z3.Z3_mk_or(self._ctx_ref, len(clause), clause))


@dataclass(frozen=True)
class ShardOutcome:
    codes: list[int]
    #: False when the shard reached its cap before running out of models: split it and run again
    complete: bool


def enumerate_shard(
    mode: Mode, prefix: Sequence[int], run: Run, facts: Sequence[Fact] = (), cap: int | None = None
) -> ShardOutcome:
    """Every board that starts with `prefix` (and satisfies the facts), walked by the process's
    long-lived propagator solver for this mode and facts."""
    walker = board_walker(mode, tuple(facts))
    return walker.shard(prefix, run, cap)


class BoardWalker:
    """The rules of one mode and facts in a long-lived SMT solver, with a `ModelWalker` over the
    (sector, object) literals weighted so that a model's value is its board code."""

    def __init__(self, mode: Mode, facts: Sequence[Fact] = (), ctx: z3.Context | None = None):
        """`ctx`: a run's context for a one-off walker (default: a context of its own, kept)."""
        ctx = ctx if ctx is not None else z3.Context()
        self.model = BoardModel(mode, ctx, facts, solver=propagator_solver(ctx))
        # the objects other than empty space: with the counts fixed, they determine the board
        rows = enumerate(self.model.vars)
        literals = [(v, obj << (BITS * i)) for i, row in rows for obj, v in enumerate(row) if obj != EMPTY]
        placed = mode.sectors - mode.counts[EMPTY]
        self.walker = ModelWalker(self.model.solver, literals, placed)

    def shard(self, prefix: Sequence[int], run: Run, cap: int | None = None) -> ShardOutcome:
        fixed = [self.model.at(index + 1, obj) for index, obj in enumerate(prefix)]
        walk = self.walker.walk(run, fixed, cap)
        return ShardOutcome(walk.values, walk.complete)


def prefixes(mode: Mode, depth: int, run: Run, facts: Sequence[Fact] = ()) -> list[list[int]]:
    """The objects of the first `depth` sectors of every board (each prefix once, in order), in one walk
    over those sectors' literals: each prefix the search reaches is blocked whole (a projection, see
    `puzzles.allmodels`), where asking about every prefix in turn took a check each."""
    ctx = run.context()
    model = BoardModel(mode, ctx, facts, solver=propagator_solver(ctx))
    literals = [(model.at(s + 1, obj), obj << (BITS * s)) for s in range(depth) for obj in range(6)]
    walk = ModelWalker(model.solver, literals, depth).walk(run)
    return sorted([(code >> (BITS * s)) & 7 for s in range(depth)] for code in walk.values)


def board_walker(mode: Mode, facts: tuple[Fact, ...] = ()) -> BoardWalker:
    """This process's walker for the mode and facts (a forked child makes its own)."""
    return _walker(mode.name, facts, os.getpid())


@functools.lru_cache(maxsize=8)
def _walker(mode_name: str, facts: tuple[Fact, ...], _pid: int) -> BoardWalker:
    return BoardWalker(MODES[mode_name], facts)


def enumerate_models(model: BoardModel, run: Run, cap: int | None = None) -> ShardOutcome:
    """Every board the model's solver allows, with a blocking clause after each (up to `cap`). Kept as
    the baseline of bench/planetx_enumerate.py; the kind enumerates with `BoardWalker`."""
    enumerator = Enumerator(model)
    codes: list[int] = []
    # the first check sets Z3's own timeout for the rest of the run; cancel interrupts any check anyway
    status = z3.Z3_L_TRUE if run.check(model.solver) == z3.sat else z3.Z3_L_FALSE
    while status == z3.Z3_L_TRUE:
        if cap is not None and len(codes) >= cap:
            return ShardOutcome(codes, complete=False)
        code = enumerator.current_board()
        codes.append(code)
        enumerator.block(code)
        status = enumerator.check()
        if status == z3.Z3_L_UNDEF:
            run.raise_for_unknown(model.solver)
    return ShardOutcome(codes, complete=True)
