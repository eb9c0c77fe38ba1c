"""Every model of a Z3 solver in one `check()`, through Z3's user propagator.

The caller names the Boolean literals that tell models apart, in one-hot groups (the solver's rules must
make exactly one literal of each group true), each literal with an integer weight; a model's value is the
sum of the weights of its true literals (e.g. a board's code). The literals are registered with the user
propagator. Its `fixed`, `push` and `pop` callbacks keep the true literals and the value up to date as
the search moves; when the search reaches a full model, the `final` callback records the value and raises
a conflict over the true literals, so the search goes on to the next model and the check ends `unsat`
once every model is recorded. That costs no restart and no model object per model, which the
check–model–block loop (`blocking_loop`, kept for solvers a propagator does not fit) pays every time.

The callbacks are bound straight to Z3's C API with ctypes (Z3's `UserPropagateBase` class wraps every
term in a Python object on every callback, which costs about 8×). Needs the SMT core
(`z3.SimpleSolver`), with `PROPAGATOR_PARAMS`: the SAT core reaches `final` with literals unset.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import z3

from puzzles.runtime import Run

#: solver parameters that make the walk fast (relevancy 0: every literal is assigned before `final`)
PROPAGATOR_PARAMS = {"smt.relevancy": 0, "smt.phase_selection": 1}

# the callback types of z3_api.h (Z3_push_eh, Z3_pop_eh, Z3_fresh_eh, Z3_fixed_eh, Z3_final_eh):
# (user context, solver callback, ...); terms and values are Z3_ast pointers
_PUSH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_POP = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint)
_FRESH = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_FIXED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_FINAL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class PropagatorError(RuntimeError):
    """The walk saw something it cannot trust (a model with a group unset, a failing callback)."""


@dataclass(frozen=True)
class Walk:
    values: list[int]
    #: False when the walk stopped at its cap with models left
    complete: bool


Literal = tuple[z3.BoolRef, int]


class ModelWalker:
    """All models of one long-lived solver, distinct on `groups`; `walk()` once per scope of extra facts.

    The solver must be an SMT solver (`z3.SimpleSolver`) whose rules make each group one-hot. Literals are
    registered once, at the solver's base level, so `walk` works inside any `push()` the caller makes.
    One walk at a time (`walk` holds a lock).
    """

    def __init__(self, solver: z3.Solver, groups: Sequence[Sequence[Literal]]):
        self.solver = solver
        ctx = solver.ctx
        self._ctx_ref = ctx.ref()
        self._solver_ref = solver.solver
        self._groups = len(groups)
        self._keep = [lit for group in groups for lit, _ in group]  # Z3 ref-counts the terms we point at
        self._weights = {lit.as_ast().value: weight for group in groups for lit, weight in group}
        self._true_ref = z3.BoolVal(True, ctx).as_ast().value
        self._false = z3.BoolVal(False, ctx)
        self._trail: list[int] = []
        self._levels: list[int] = []
        self._value = 0
        self._found: list[int] = []
        self._cap: int | None = None
        self._failure: str | None = None
        self._lock = threading.Lock()
        self._callbacks = (
            _PUSH(self._on_push),
            _POP(self._on_pop),
            _FRESH(self._on_fresh),
            _FIXED(self._on_fixed),
            _FINAL(self._on_final),
        )
        push, pop, fresh, fixed, final = self._callbacks
        z3.Z3_solver_propagate_init(self._ctx_ref, self._solver_ref, None, push, pop, fresh)
        z3.Z3_solver_propagate_fixed(self._ctx_ref, self._solver_ref, fixed)
        z3.Z3_solver_propagate_final(self._ctx_ref, self._solver_ref, final)
        for lit in self._keep:
            z3.Z3_solver_propagate_register(self._ctx_ref, self._solver_ref, lit.as_ast())

    def walk(self, run: Run, facts: Sequence[z3.BoolRef] = (), cap: int | None = None) -> Walk:
        """Every model's value under the solver's assertions and `facts` (up to `cap` of them). The facts
        and the conflicts of the walk live in a scope of their own, popped at the end."""
        with self._lock, run.adopt(self.solver.ctx), run.interruptible():
            run.raise_if_stopped()
            self.solver.push()
            try:
                self.solver.add(*facts)
                status, found = self._check(cap)
            finally:
                self.solver.pop()
            if self._failure is not None:
                raise PropagatorError(self._failure)
            if status == z3.Z3_L_UNDEF:
                run.raise_for_unknown(self.solver)
            if status == z3.Z3_L_TRUE and (cap is None or len(found) < cap):
                raise PropagatorError("the search ended on a model that the propagator did not block")
            return Walk(found, complete=status == z3.Z3_L_FALSE)

    def _check(self, cap: int | None) -> tuple[int, list[int]]:
        self._found, self._cap, self._failure = [], cap, None
        try:
            return z3.Z3_solver_check(self._ctx_ref, self._solver_ref), self._found
        finally:
            self._found = []

    # -- callbacks (called by Z3 from inside check(); an exception here cannot reach the caller) ------
    def _on_push(self, _user: int | None, _cb: int | None) -> None:
        self._levels.append(len(self._trail))

    def _on_pop(self, _user: int | None, _cb: int | None, scopes: int) -> None:
        mark = self._levels[-scopes]
        del self._levels[-scopes:]
        weights = self._weights
        for term in self._trail[mark:]:
            self._value -= weights[term]
        del self._trail[mark:]

    def _on_fresh(self, user: int | None, _new_ctx: int | None) -> int | None:
        self._failure = "Z3 asked for a copy of the propagator (a parallel or cubing solver)"
        return user

    def _on_fixed(self, _user: int | None, _cb: int | None, term: int, value: int) -> None:
        if value == self._true_ref:
            self._trail.append(term)
            self._value += self._weights[term]

    def _on_final(self, _user: int | None, cb: int) -> None:
        try:
            trail = self._trail
            if len(trail) != self._groups:
                self._failure = f"a model with {len(trail)} of {self._groups} groups set"
                return
            if self._cap is not None and len(self._found) >= self._cap:
                return  # no conflict: the check answers sat, the walk is incomplete
            self._found.append(self._value)
            self._conflict(cb, trail)
        except Exception as exc:  # noqa: BLE001 - reported by walk()
            self._failure = f"final callback failed: {exc!r}"

    def _conflict(self, cb: int, terms: list[int]) -> None:
        """This assignment of the true literals is not allowed: fixed terms → false."""
        array = (z3.Ast * len(terms))(*terms)
        z3.Z3_solver_propagate_consequence(
            self._ctx_ref, ctypes.c_void_p(cb), len(terms), array, 0, None, None, self._false.as_ast()
        )


def propagator_solver(ctx: z3.Context) -> z3.Solver:
    """An SMT solver set up for `ModelWalker`."""
    solver = z3.SimpleSolver(ctx=ctx)
    for name, value in PROPAGATOR_PARAMS.items():
        solver.set(name, value)
    return solver
