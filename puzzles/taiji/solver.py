"""Taiji with Z3: find a lighting of the tiles that satisfies every symbol, then look for a second one.

Encoding (quantifier-free: Booleans, pseudo-Boolean sums and small bit-vectors for Z3's QF_FD engine):
- a Bool `lit` per existing tile; fixed tiles are constant, joined tiles equal;
- only areas holding a *relevant* symbol (a die, a diamond, or a symbol counting towards a diamond's
  colour) are labelled, by their root: the area's first relevant symbol in reading order. Each tile has
  one-hot Bools "my area's root is r", plus "none" for areas without relevant symbols. Same-state
  neighbours share the label, other-state neighbours never share one. A relevant symbol may only take a
  root at or before itself, so every area has exactly one possible label (no symmetric copies);
- connectivity: a bit-vector `dist` per tile; every labelled tile other than a root has a same-state
  neighbour with a smaller `dist`, so those steps always end at the root and a label cannot span two
  disconnected regions;
- per root: the dice pips of its members add up to 0 or to its member count (plus the implied bounds
  0 ≤ pips ≤ members, which propagate better), its dice share a colour, and for each diamond colour c
  with a c-diamond inside, exactly 2 c-symbols lie inside. A die whose area can only hold positive dice
  bounds the area's size, so tiles further away never get its label.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Sequence
from typing import Any

import z3

from puzzles.runtime import Run, TimeLimitExceeded
from puzzles.taiji.code import Puzzle, Tile, puzzle_from_params
from puzzles.taiji.rules import colour_counts, is_valid, neighbours

Solution = list[list[int | None]]


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """Solve a Taiji puzzle given as `code` or `grid`; with `unique` (default) look for a second answer."""
    with run.interruptible():
        return _solve(params, run)


def _solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    started = time.perf_counter()
    puzzle = puzzle_from_params(params)
    run.progress(phase="solving", width=puzzle.width, height=puzzle.height)
    encoding = Encoding(puzzle, run.context(), run.raise_if_stopped)
    result: dict[str, Any] = {
        "status": "unsat",
        "solution": None,
        "rendering": None,
        "unique": None,
        "up_to_flip": not puzzle.has_fixed,
        "second_solution": None,
        "width": puzzle.width,
        "height": puzzle.height,
        "valid": None,
    }
    if run.check(encoding.solver) == z3.sat:
        first = encoding.solution()
        result.update(status="solved", solution=first, rendering=render(first), valid=is_valid(puzzle, first))
        if params.get("unique", True):
            result.update(_second_look(encoding, first, run))
            second = result["second_solution"]
            result["valid"] = result["valid"] and (second is None or is_valid(puzzle, second))
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def _second_look(encoding: Encoding, first: Solution, run: Run) -> dict[str, Any]:
    """`unique` and `second_solution`; a time limit here still returns the first solution (unique: None)."""
    run.progress(phase="checking uniqueness")
    encoding.exclude(first)
    try:
        if run.check(encoding.solver) == z3.sat:
            return {"unique": False, "second_solution": encoding.solution()}
    except TimeLimitExceeded:
        return {}
    return {"unique": True}


def render(solution: Solution) -> list[str]:
    """Text rows: `#` lit, `.` unlit, a space for a hole."""
    return ["".join(" " if v is None else "#" if v else "." for v in row) for row in solution]


class Encoding:
    """The Z3 model of one puzzle, in its own context; `solver` holds every rule."""

    def __init__(self, puzzle: Puzzle, ctx: z3.Context, checkpoint: Callable[[], None] = lambda: None):
        """`checkpoint` is called between tiles (and roots) while building: it may raise to abandon a long
        build, which Z3 cannot interrupt."""
        self.puzzle, self.ctx, self.checkpoint = puzzle, ctx, checkpoint
        self.solver = z3.SolverFor("QF_FD", ctx=ctx)
        # existing tiles get dense indexes 0..m-1 (row-major); `where` maps them back to the grid
        self.where = [i for i, t in enumerate(puzzle.tiles) if t is not None]
        dense = {g: k for k, g in enumerate(self.where)}
        self.tiles: list[Tile] = [t for t in puzzle.tiles if t is not None]
        self.near = [[dense[n] for n in neighbours(puzzle, g)] for g in self.where]
        self.lit = [z3.Bool(f"lit{k}", ctx) for k in range(len(self.tiles))]
        self._same_state_vars: dict[tuple[int, int], z3.BoolRef] = {}
        self._tile_rules(dense)
        roots = self._relevant()
        if roots:
            self._label_areas(roots)
            self._dice(roots)
            self._diamonds(roots)

    # -- per tile ---------------------------------------------------------------------------------
    def _tile_rules(self, dense: dict[int, int]) -> None:
        add, lit, width = self.solver.add, self.lit, self.puzzle.width
        for k, tile in enumerate(self.tiles):
            if tile.fixed:
                add(lit[k] == tile.lit)
            if tile.join_left:
                add(lit[k] == lit[dense[self.where[k] - 1]])
            if tile.join_up:
                add(lit[k] == lit[dense[self.where[k] - width]])
            if tile.symbol == "flower":
                add(self._exactly([self._same_state(k, n) for n in self.near[k]], tile.value))
        if self.lit and not self.puzzle.has_fixed:
            # flipping every tile maps solutions to solutions: keep the ones with the first tile lit
            add(lit[0])

    def _relevant(self) -> list[int]:
        """Tiles whose area matters: dice, diamonds, and symbols counting towards a diamond's colour."""
        diamond_colours = {t.colour for t in self.tiles if t.symbol == "diamond"}
        return [
            k
            for k, t in enumerate(self.tiles)
            if t.symbol in ("dice", "diamond") or set(colour_counts([t])) & diamond_colours
        ]

    # -- areas ------------------------------------------------------------------------------------
    def _label_areas(self, roots: list[int]) -> None:
        self._make_labels(roots)
        m = len(self.tiles)
        bits = max(1, (m - 1).bit_length())
        self.dist = [z3.BitVec(f"dist{k}", bits, self.ctx) for k in range(m)]
        for t in range(m):
            self.checkpoint()
            for n in self.near[t]:
                if n > t:
                    self._neighbours_share_labels(t, n, roots)
            self._leads_to_root(t)

    def _make_labels(self, roots: list[int]) -> None:
        """One-hot labels: `member[t, r]` = tile t lies in the area rooted at r (None: no relevant symbol)."""
        relevant = set(roots)
        reach = {r: self._reach(r, roots) for r in roots}
        self.member: dict[tuple[int, int | None], z3.BoolRef] = {}
        for t in range(len(self.tiles)):
            self.checkpoint()
            # the root is its area's first relevant symbol, so a relevant tile's root is not after it
            for r in (r for r in roots if (r <= t or t not in relevant) and t in reach[r]):
                self.member[t, r] = z3.Bool(f"in{t}_{r}", self.ctx)
            if t not in relevant:
                self.member[t, None] = z3.Bool(f"none{t}", self.ctx)
            labels = [self.member[t, r] for r in [*roots, None] if (t, r) in self.member]
            self.solver.add(self._exactly(labels, 1))
        self.not_member = {key: z3.Not(b) for key, b in self.member.items()}

    def _reach(self, r: int, roots: list[int]) -> set[int]:
        """The tiles that may lie in the area rooted at r. A die whose area can only hold positive dice
        (its colour, at or after it) has an area of exactly their pip sum at most, so tiles further away
        than that are out."""
        m, root = len(self.tiles), self.tiles[r]
        if root.symbol != "dice":
            return set(range(m))
        pips = [self.tiles[d].value for d in roots if d >= r and self._same_dice_colour(d, root)]
        if min(pips) < 0:
            return set(range(m))
        seen, frontier = {r}, [r]
        for _ in range(sum(pips) - 1):
            frontier = list({n for t in frontier for n in self.near[t] if n not in seen})
            seen.update(frontier)
        return seen

    def _same_dice_colour(self, d: int, die: Tile) -> bool:
        return self.tiles[d].symbol == "dice" and self.tiles[d].colour == die.colour

    def _neighbours_share_labels(self, t: int, n: int, roots: list[int]) -> None:
        alike = self._same_state(t, n)
        unlike = z3.Not(alike)
        for r in [*roots, None]:
            a, b = self.member.get((t, r)), self.member.get((n, r))
            if a is None and b is None:
                continue
            if a is None or b is None:
                self._clause(unlike, self.not_member[(t, r) if b is None else (n, r)])
                continue
            self._clause(unlike, self.not_member[t, r], b)
            self._clause(unlike, a, self.not_member[n, r])
            if r is not None:  # unlabelled areas of both states may touch
                self._clause(alike, self.not_member[t, r], self.not_member[n, r])

    def _leads_to_root(self, t: int) -> None:
        """A labelled tile is its area's root or has a same-state neighbour closer to the root."""
        dist, settled = self.dist, [self.member[t, r] for r in (t, None) if (t, r) in self.member]
        for start in settled:
            self.solver.add(z3.Implies(start, dist[t] == 0))
        closer = [z3.And(self._same_state(t, n), z3.ULT(dist[n], dist[t])) for n in self.near[t]]
        self._clause(*settled, *closer)

    def _same_state(self, t: int, n: int) -> z3.BoolRef:
        """A Bool for "neighbours t and n have the same state" (made once per pair)."""
        key = (min(t, n), max(t, n))
        if key not in self._same_state_vars:
            alike = self._same_state_vars[key] = z3.Bool(f"alike{key[0]}_{key[1]}", self.ctx)
            self.solver.add(alike == (self.lit[t] == self.lit[n]))
        return self._same_state_vars[key]

    def _clause(self, *literals: z3.BoolRef) -> None:
        """Assert a disjunction through the C API: the argument checks of z3.Or and Solver.add took
        most of the build time on an 8×8 puzzle (thousands of clauses)."""
        ref = self.ctx.ref()
        args = (z3.Ast * len(literals))(*[literal.as_ast() for literal in literals])
        z3.Z3_solver_assert(ref, self.solver.solver, z3.Z3_mk_or(ref, len(literals), args))

    # -- symbols ----------------------------------------------------------------------------------
    def _dice(self, roots: list[int]) -> None:
        dice_colours = sorted({t.colour or "" for t in self.tiles if t.symbol == "dice"})
        for r in roots:
            self.checkpoint()
            members = [t for t in range(len(self.tiles)) if (t, r) in self.member]
            pips = {t: self.tiles[t].value if self.tiles[t].symbol == "dice" else 0 for t in members}
            if not any(pips.values()):
                continue
            self._one_dice_colour(r, [t for t in members if pips[t]], dice_colours)
            pip_sum = [(self.member[t, r], pips[t]) for t in members if pips[t]]
            # pips == member count  <=>  the sum of (pips - 1) over the members is 0
            excess = [(self.member[t, r], pips[t] - 1) for t in members if pips[t] != 1]
            self.solver.add(z3.Or(self._sum(pip_sum, "==", 0), self._sum(excess, "==", 0)))
            # implied by the line above (0 <= pips <= member count), but they propagate on their own
            self.solver.add(self._sum(pip_sum, ">=", 0), self._sum(excess, "<=", 0))

    def _one_dice_colour(self, r: int, dice: list[int], colours: list[str]) -> None:
        """The dice in the area rooted at r share one colour (uncoloured being a colour of its own)."""
        if len({self.tiles[d].colour for d in dice}) < 2:
            return
        colour = {c: z3.Bool(f"dice{r}_{c}", self.ctx) for c in colours}
        for d in dice:
            self._clause(self.not_member[d, r], colour[self.tiles[d].colour or ""])
        self.solver.add(self._sum([(b, 1) for b in colour.values()], "<=", 1))

    def _diamonds(self, roots: list[int]) -> None:
        """Per root and colour c: if a c-diamond lies in the area, the area holds exactly 2 c-symbols."""
        for colour in {self.tiles[d].colour for d in roots if self.tiles[d].symbol == "diamond"}:
            weight = {k: colour_counts([self.tiles[k]])[colour] for k in roots}
            diamonds = [
                d for d in roots if self.tiles[d].symbol == "diamond" and self.tiles[d].colour == colour
            ]
            for r in roots:
                self.checkpoint()
                inside = [d for d in diamonds if (d, r) in self.member]
                if not inside:
                    continue
                has = z3.Bool(f"diamond{r}_{colour}", self.ctx)
                for d in inside:
                    self._clause(self.not_member[d, r], has)
                counted = [
                    (self.member[k, r], weight[k]) for k in roots if weight[k] and (k, r) in self.member
                ]
                self.solver.add(z3.Implies(has, self._sum(counted, "==", 2)))

    def _exactly(self, bools: Sequence[z3.BoolRef], count: int) -> z3.BoolRef:
        return self._sum([(b, 1) for b in bools], "==", count)

    def _sum(self, terms: Sequence[tuple[z3.BoolRef, int]], op: str, bound: int) -> z3.BoolRef:
        """The pseudo-Boolean constraint Σ coefficient·[literal] `op` bound, built through the C API
        (z3.PbEq's argument checks cost more than the solving on big grids; it also puts an empty sum in
        the global context)."""
        if not terms:
            return z3.BoolVal({"==": bound == 0, ">=": bound <= 0, "<=": bound >= 0}[op], self.ctx)
        make = {"==": z3.Z3_mk_pbeq, ">=": z3.Z3_mk_pbge, "<=": z3.Z3_mk_pble}[op]
        args = (z3.Ast * len(terms))(*[literal.as_ast() for literal, _ in terms])
        coefficients = (ctypes.c_int * len(terms))(*[c for _, c in terms])
        return z3.BoolRef(make(self.ctx.ref(), len(terms), args, coefficients, bound), self.ctx)

    # -- answers ----------------------------------------------------------------------------------
    def solution(self) -> Solution:
        """The lit grid of the solver's current model (rows of 0/1, None for holes)."""
        model = self.solver.model()
        cells: list[int | None] = [None] * len(self.puzzle.tiles)
        for k, g in enumerate(self.where):
            cells[g] = int(z3.is_true(model.eval(self.lit[k], model_completion=True)))
        width = self.puzzle.width
        return [cells[r * width : (r + 1) * width] for r in range(self.puzzle.height)]

    def exclude(self, solution: Solution) -> None:
        """Rule out this lighting (its full flip is already excluded by the symmetry break)."""
        flat = [v for row in solution for v in row if v is not None]
        self._clause(*[z3.Not(lit) if v else lit for lit, v in zip(self.lit, flat, strict=True)])
