"""Every model of a Z3 solver in one `check()`, through Z3's user propagator.

The caller names Boolean literals, each with an integer weight, such that the solver's rules make exactly
`true_count` of them true in every model and those determine the model (one-hot groups, say, where a
value that the others imply may be left out); a model's value is the sum of the weights of its true
literals (e.g. a board's code). The literals are registered with the user propagator: its `fixed`, `push`
and `pop` callbacks keep the list of true literals up to date as the search moves; when the search reaches
a full model, the `final` callback records the value and raises a conflict over the true literals, so the
search goes on to the next model and the check ends `unsat` once every model is recorded. Z3 may drop a
conflict learned this way and find that model again: a value seen before is blocked again but not
recorded twice (`Walk.repeats` counts them). Literals that do not determine the model (the cells of a
prefix, say) make the walk a projection: the conflict blocks every model that agrees on them, so each of
their assignments is found once. No restart and no model object per model, which the
check–model–block loop (`puzzles.planetx.solver.enumerate_models`) pays every time.

The callbacks are bound straight to Z3's C API with ctypes (Z3's `UserPropagateBase` class wraps every
term in a Python object on every callback, which costs about 8×). Needs the SMT core
(`propagator_solver`): the SAT core reaches `final` with literals unset.
"""

from __future__ import annotations

import _ctypes
import ctypes
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

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


def _libz3() -> ctypes.CDLL | None:
    """The libz3 that the z3 package loaded, if it came from the package's own folder (RTLD_NOLOAD: never
    a second copy of the library)."""
    for path in sorted((Path(z3.__file__).parent / "lib").glob("libz3.*")):
        try:
            return ctypes.CDLL(str(path), mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        except OSError:
            continue
    return None


#: (ctx, solver callback, n, fixed terms, 0, None, None, conseq): Z3_solver_propagate_consequence
Consequence = Callable[[z3.ContextObj, int, int, "ctypes.Array[ctypes.c_void_p]", int, None, None, int], bool]


def _bind_consequence() -> Consequence:
    """Z3_solver_propagate_consequence under our own prototype, called straight from the callback:
    z3core's wrapper converts and error-checks every argument on every call (about a tenth of the time
    per model). Falls back to that wrapper when libz3 came from elsewhere."""
    lib = _libz3()
    if lib is None:
        return _wrapped_consequence
    function = lib.Z3_solver_propagate_consequence
    function.restype = ctypes.c_bool
    pointer = ctypes.c_void_p
    function.argtypes = [pointer, pointer, ctypes.c_uint, ctypes.POINTER(pointer)]
    function.argtypes += [ctypes.c_uint, pointer, pointer, pointer]
    return function


def _wrapped_consequence(
    ctx: z3.ContextObj,
    cb: int,
    n: int,
    terms: ctypes.Array[ctypes.c_void_p],
    _equalities: int,
    _lhs: None,
    _rhs: None,
    conseq: int,
) -> bool:
    fixed = ctypes.cast(terms, ctypes.POINTER(z3.Ast))
    propagated: bool = z3.Z3_solver_propagate_consequence(
        ctx, ctypes.c_void_p(cb), n, fixed, 0, None, None, ctypes.c_void_p(conseq)
    )
    return propagated


_consequence = _bind_consequence()


class PropagatorError(RuntimeError):
    """The walk saw something it cannot trust (a model with the wrong number of true literals, a model it
    did not block, a copy of the propagator)."""


@dataclass(frozen=True)
class Walk:
    values: list[int]
    #: False when the walk stopped at its cap with models left
    complete: bool
    #: models found again after Z3 dropped their conflict (not in `values`)
    repeats: int = 0


Literal = tuple[z3.BoolRef, int]


class ModelWalker:
    """All models of one long-lived solver, distinct on `literals`; `walk()` once per scope of extra facts.

    The solver must be an SMT solver (`propagator_solver`) whose rules make exactly `true_count` of the
    literals true in every model. They are registered once, at the solver's base level.
    One walk at a time (`walk` holds a lock).
    """

    def __init__(self, solver: z3.Solver, literals: Sequence[Literal], true_count: int):
        self.solver = solver
        self._ctx_ref = solver.ctx.ref()
        self._solver_ref = solver.solver
        self._keep = [lit for lit, _ in literals]  # Z3 ref-counts the terms we point at
        self._found: list[int] = []
        self._seen: set[int] = set()
        self._repeats = 0
        self._cap: int | None = None
        self._failure: str | None = None
        self._lock = threading.Lock()
        self._callbacks = self._bind(literals, true_count)
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
            return Walk(found, complete=status == z3.Z3_L_FALSE, repeats=self._repeats)

    def _check(self, cap: int | None) -> tuple[int, list[int]]:
        self._found, self._seen, self._cap, self._failure, self._repeats = [], set(), cap, None, 0
        try:
            return z3.Z3_solver_check(self._ctx_ref, self._solver_ref), self._found
        finally:
            self._found, self._seen = [], set()

    def _bind(self, literals: Sequence[Literal], size: int) -> tuple[_ctypes.CFuncPtr, ...]:
        """The callbacks, as closures over local state (they run millions of times: no attribute
        look-ups). Z3 calls them from inside check(); an exception there cannot reach the caller, so
        they record a failure for `walk` to raise.

        The state is the true literals so far, kept in place in the ctypes array that the conflict
        passes to Z3, and the sum of their weights; a push saves (count, sum), a pop goes back to it.
        Per model that is a couple of `fixed` calls that do work (about two in three are a literal
        fixed false, which returns at once) and one conflict, with no copying and no summing."""
        weights = {lit.as_ast().value: weight for lit, weight in literals}
        true_ref = z3.BoolVal(True, self.solver.ctx).as_ast().value
        self._false = z3.BoolVal(False, self.solver.ctx)  # kept alive: Z3 ref-counts it
        false_ref, ctx_ref = self._false.as_ast().value, self._ctx_ref
        conflict = _consequence  # read here: a test swaps in the fallback
        true_terms = (ctypes.c_void_p * size)()  # the registered terms fixed true, in order
        count, value = 0, 0  # how many, and the sum of their weights
        levels: list[tuple[int, int]] = []  # (count, value) at each push

        def on_push(_user: int | None, _cb: int | None) -> None:
            levels.append((count, value))

        def on_pop(_user: int | None, _cb: int | None, scopes: int) -> None:
            nonlocal count, value
            count, value = levels[-scopes]
            del levels[-scopes:]

        def on_fresh(user: int | None, _new_ctx: int | None) -> int | None:
            self._failure = "Z3 asked for a copy of the propagator (a parallel or cubing solver)"
            return user

        def on_fixed(_user: int | None, _cb: int | None, term: int, fixed: int) -> None:
            nonlocal count, value
            if fixed == true_ref:
                if count == size:
                    self._failure = f"a model with more than {size} true literals"
                    return
                true_terms[count] = term
                count += 1
                value += weights[term]

        def on_final(_user: int | None, cb: int) -> None:
            if count != size:
                self._failure = f"a model with {count} true literals, not {size}"
                return
            if value in self._seen:
                self._repeats += 1
            elif self._cap is not None and len(self._found) >= self._cap:
                return  # no conflict: the check answers sat, the walk is incomplete
            else:
                self._seen.add(value)
                self._found.append(value)
            conflict(ctx_ref, cb, size, true_terms, 0, None, None, false_ref)  # these terms imply false

        return _PUSH(on_push), _POP(on_pop), _FRESH(on_fresh), _FIXED(on_fixed), _FINAL(on_final)


def propagator_solver(ctx: z3.Context) -> z3.Solver:
    """An SMT solver set up for `ModelWalker`."""
    solver = z3.SimpleSolver(ctx=ctx)
    for name, value in PROPAGATOR_PARAMS.items():
        solver.set(name, value)
    return solver
