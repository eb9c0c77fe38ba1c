"""The SAT model of "the secret fits every feedback" (the seed's encoding: a Boolean per position × colour;
per feedback, a cardinality constraint for black, and one over per-colour "count ≥ j" bits for black +
white), and what is drawn from it: a minimal conflicting set of history entries, a count of the fitting
codes, and distinct fitting codes each pulled towards a random code.

A play shard or guess call keeps one Z3 context (`_Session`; each holds its memory until the run ends), and
Z3's models depend on what ran before in it.
"""

from __future__ import annotations

import random
from collections import Counter

import z3

from puzzles.mastermind.codes import ENUM_LIMIT, Code, Entry, History, _consistent_codes, code_at
from puzzles.runtime import Run, SolverGaveUp

#: conflicts a sampling check may take before it drops its pull, and a counting check before counting stops
SAMPLE_CONFLICTS = 1_000
COUNT_CONFLICTS = 200
#: `guess` counts the codes that fit a large history by SAT enumeration up to this many
COUNT_CAP = 100
#: a SAT model costs about n × k; sampling and counting draw at most SAT_WORK / (n × k) models (at least 8)
SAT_WORK = 24_000


class _Model:
    """The seed's encoding of "the secret fits every feedback"."""

    def __init__(self, n: int, k: int, history: History, ctx: z3.Context, tracked: bool = False):
        self.n, self.k, self.ctx = n, k, ctx
        self.solver = z3.SolverFor("QF_FD", ctx=ctx)
        self.x = [[z3.Bool(f"x{i}_{c}", ctx) for c in range(k)] for i in range(n)]
        for row in self.x:
            self.solver.add(z3.PbEq([(v, 1) for v in row], 1))
        self._count_bits: dict[int, list[z3.BoolRef]] = {}
        self._value: z3.ArithRef | None = None
        self._negated: list[list[z3.BoolRef]] | None = None
        #: with `tracked`, entry i holds only under the assumption indicators[i] (for unsat cores)
        self.indicators: list[z3.BoolRef] = []
        for index, entry in enumerate(history):
            self._add(entry, z3.Bool(f"entry{index}", ctx) if tracked else None)

    def _at_least(self, colour: int, m: int) -> list[z3.BoolRef]:
        """Bits 1..m of the secret's count of `colour`: bit j holds iff the count is at least j."""
        bits = self._count_bits.setdefault(colour, [])
        column = [self.x[i][colour] for i in range(self.n)]
        while len(bits) < m:
            bit = z3.Bool(f"count{colour}_ge{len(bits) + 1}", self.ctx)
            self.solver.add(bit == z3.AtLeast(*column, len(bits) + 1))
            bits.append(bit)
        return bits[:m]

    def _add(self, entry: Entry, indicator: z3.BoolRef | None) -> None:
        guess, black, white = entry
        # min(count in secret, count in guess) = how many of the first (count in guess) count bits hold
        common = [bit for colour, m in Counter(guess).items() for bit in self._at_least(colour, m)]
        constraints = [
            z3.PbEq([(self.x[i][c], 1) for i, c in enumerate(guess)], black),
            z3.PbEq([(b, 1) for b in common], black + white),
        ]
        if indicator is None:
            self.solver.add(*constraints)
        else:
            self.indicators.append(indicator)
            self.solver.add(*(z3.Implies(indicator, c) for c in constraints))

    def code(self) -> Code:
        # one eval of the code as a base-k number: far faster than an eval per Boolean
        if self._value is None:
            ctx, n, k = self.ctx, self.n, self.k
            zero = z3.IntVal(0, ctx)
            terms = [
                z3.If(self.x[i][c], z3.IntVal(c * k ** (n - 1 - i), ctx), zero)
                for i in range(n)
                for c in range(1, k)
            ]
            self._value = z3.Sum([*terms, zero])
        value = self.solver.model().eval(self._value, model_completion=True).as_long()
        return code_at(value, self.n, self.k)

    def block(self, code: Code) -> None:
        if self._negated is None:
            self._negated = [[z3.Not(v) for v in row] for row in self.x]
        # Z3_mk_or directly: z3.Or's argument coercion costs more than the solver check here
        lits = (z3.Ast * self.n)(*(self._negated[i][c].as_ast() for i, c in enumerate(code)))
        self.solver.add(z3.BoolRef(z3.Z3_mk_or(self.ctx.ref(), self.n, lits), self.ctx))

    def next_code(self, run: Run) -> Code | None:
        """A model not returned before, or None when there is none left."""
        if run.check(self.solver) != z3.sat:
            return None
        code = self.code()
        self.block(code)
        return code


class _Session:
    """A run plus one Z3 context for a whole guess call or play shard (the run keeps every context it hands
    out until it ends, so one per solver would pile up)."""

    def __init__(self, run: Run):
        self.run = run
        self._ctx: z3.Context | None = None
        #: how often Z3 was asked for: a decision that asked nothing of it is a function of its inputs
        self.z3_uses = 0

    @property
    def ctx(self) -> z3.Context:
        self.z3_uses += 1
        if self._ctx is None:
            self._ctx = self.run.context()
        return self._ctx


def conflicting_entries(n: int, k: int, history: History, session: _Session) -> list[int] | None:
    """Indexes of a minimal set of history entries no code fits together, or None if some code fits."""
    model = _Model(n, k, history, session.ctx, tracked=True)
    run = session.run
    if run.check(model.solver, *model.indicators) == z3.sat:
        return None
    core = {lit.get_id() for lit in model.solver.unsat_core()}
    kept = [i for i, lit in enumerate(model.indicators) if lit.get_id() in core]
    for index in list(kept):
        trial = [model.indicators[i] for i in kept if i != index]
        if run.check(model.solver, *trial) == z3.unsat:
            kept.remove(index)
    return kept


def sat_models(n: int, k: int, wanted: int) -> int:
    """How many SAT models to draw when `wanted` are asked: fewer for large codes, whose models are slow."""
    return min(wanted, max(8, SAT_WORK // (n * k)))


def count_consistent(
    n: int, k: int, history: History, session: _Session, cap: int = COUNT_CAP
) -> tuple[int, bool]:
    """How many codes fit the history, up to `cap` (fewer if the solver struggles); True if that is all."""
    if k**n <= ENUM_LIMIT:
        return len(_consistent_codes(n, k, history)), True
    model = _Model(n, k, history, session.ctx)
    model.solver.set("max_conflicts", COUNT_CONFLICTS)  # a hard count is not worth waiting for
    found = 0
    try:
        while found < cap:
            if model.next_code(session.run) is None:
                return found, True
            found += 1
    except SolverGaveUp:
        pass
    return found, False


def _sat_sample(
    n: int, k: int, history: History, count: int, rng: random.Random, session: _Session
) -> tuple[list[Code], bool]:
    """Up to `count` distinct consistent codes from the SAT solver; True if that is all of them.

    Each model is pulled towards a random code: its colours at a random quarter of the positions are
    assumed, and the assumptions in an unsat core dropped until a model fits. The models come out about as
    diverse as with random phases, less biased, and without random phases' very slow checks."""
    model, run = _Model(n, k, history, session.ctx), session.run
    found: list[Code] = []
    while len(found) < count:
        lits = (model.x[i][rng.randrange(k)] for i in rng.sample(range(n), max(1, n // 4)))
        code = _pulled_model(model, {lit.get_id(): lit for lit in lits}, run)
        if code is None:
            return found, True
        model.block(code)
        found.append(code)
    return found, False


def _pulled_model(model: _Model, assumptions: dict[int, z3.BoolRef], run: Run) -> Code | None:
    """A model under as many of `assumptions` as fit (None if there is no model at all)."""
    model.solver.set("max_conflicts", SAMPLE_CONFLICTS)
    while True:
        try:
            result = run.check(model.solver, *assumptions.values())
        except SolverGaveUp:
            if not assumptions:
                model.solver.set("max_conflicts", 2**32 - 1)
            assumptions.clear()  # a hard corner: let the solver go where it likes
            continue
        if result == z3.sat:
            return model.code()
        core = model.solver.unsat_core()
        if len(core) == 0:
            return None
        for lit in core:
            assumptions.pop(lit.get_id(), None)
