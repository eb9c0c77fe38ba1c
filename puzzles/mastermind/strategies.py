"""The next guess for a history (`decide`), by strategy:

* `consistent` — the seed's AI: one SAT model of "the secret fits every feedback" (a Boolean per position ×
  colour; per feedback, a cardinality constraint for black, and one over per-colour "count ≥ j" bits for
  black + white); the solver's first model.
* `minimax` — Knuth: every code is a candidate; the smallest worst-case feedback class wins, ties to a
  consistent code, then to the lexicographically smallest. Only for k**n ≤ MINIMAX_LIMIT; above it `best`
  plays instead and `note` says so.
* `best` — "most parts": the candidate splitting the consistent codes into the most feedback classes, ties
  to a consistent code, then the smallest. With k**n ≤ ENUM_LIMIT the consistent codes are listed exactly
  and every code is a candidate (within POOL_BUDGET feedback evaluations; over it, sampled consistent
  codes refined by hill climbing). Above it the candidates are sampled consistent codes (`sampled`: drawn
  uniformly by meeting in the middle or by rejection, else distinct SAT models each pulled towards a
  random code), refined by hill climbing when the sample is uniform or complete, and the largest feedback
  entropy over the sample wins (with every consistent code in hand: the most parts, or when met in the
  middle the fewest expected turns).
* `best` at the middle sizes (`stronger.engine_fits`: 5×8, 8×6, …; not k ≥ 9): candidates beyond the
  codes that fit, scored by table look-ups, and an exact end game (`stronger`); the `best` described
  above stays reachable as strategy `best-previous` (for the benchmark's baseline). At 5×5, 5×8, 7×7, 8×6
  and 6×9 `best` plays its first two guesses from the opening book (`book`: exact entropy, chosen
  offline), and at 7×7, 8×6 and 6×9 its third from the third-turn book (`third`: exact entropy, every code
  a candidate). At 6×9 and 7×7 the middle game (more codes fit than the exact end game takes) is
  `middle`'s (fewest expected further guesses, every code that fits and many others as candidates), its
  fourth guess stored at 6×9 (`fourth`).
* `optimal` — the least total number of guesses over every secret: the stored decision tree of
  `optimal` (only for the sizes it holds); a history that left the tree is searched live while at most
  optimal.LIVE_LIMIT codes fit it, else `best` plays and `note` says so.

Codes that differ by a permutation of the colours no history guess used split every set alike, so only the
lexicographically smallest of each such class is a candidate; the first guess is one per partition of n.
"""

from __future__ import annotations

from puzzles.mastermind.book import book_move
from puzzles.mastermind.codes import ENUM_LIMIT, History, _canonical_codes, _consistent_codes, _Targets
from puzzles.mastermind.fourth import fourth_move
from puzzles.mastermind.middle import decide_middle
from puzzles.mastermind.model import _Model, _Session, conflicting_entries
from puzzles.mastermind.sampled import _decide_sampled
from puzzles.mastermind.scoring import POOL_BUDGET, Decision, _climb, _opening, _pick, _rng
from puzzles.mastermind.stronger import PREVIOUS, decide_best
from puzzles.mastermind.third import third_move
from puzzles.runtime import Run

STRATEGIES = ("consistent", "minimax", "best", "optimal")
DEFAULT_SAMPLES = 100
#: Knuth's minimax scores every code against every consistent code
MINIMAX_LIMIT = 10_000
#: consistent codes partitioned at most when the full list is longer (a uniform sample of it)
TARGETS_CAP = 600


def _decide_consistent(n: int, k: int, history: History, session: _Session) -> Decision:
    code = _Model(n, k, history, session.ctx).next_code(session.run)
    if code is None:
        return Decision(None, "consistent", 0, conflict=conflicting_entries(n, k, history, session))
    return Decision(code, "consistent", None, 1)


def _decide_listed(
    n: int, k: int, history: History, objective: str, seed: int, session: _Session
) -> Decision:
    """k**n ≤ ENUM_LIMIT: candidates scored against the listed consistent codes."""
    run, strategy = session.run, "minimax" if objective == "minimax" else "best"
    codes = _consistent_codes(n, k, history)
    if not codes:
        return Decision(None, strategy, 0, conflict=conflicting_entries(n, k, history, session))
    decision = Decision(codes[0], strategy, len(codes), len(codes))
    if len(codes) <= 2:
        return decision
    rng = _rng(seed, history)
    if not history:
        decision.guess = _opening(n, k, objective, seed, run)
        return decision
    consistent = set(codes)
    pool = _canonical_codes(n, k, frozenset(c for guess, _, _ in history for c in guess)) or ()
    if objective == "minimax" or (pool and len(pool) * len(codes) <= POOL_BUDGET):
        decision.guess = _pick(pool, _Targets(codes, k), consistent, objective, run)[0]
        return decision
    # too many candidates for the budget: sampled consistent codes, refined by hill climbing
    targets = codes if len(codes) <= TARGETS_CAP else rng.sample(codes, TARGETS_CAP)
    objective = "parts" if len(targets) == len(codes) else "entropy"
    scored = _Targets(targets, k)
    start = _pick(sorted(targets[: POOL_BUDGET // len(targets)]), scored, consistent, objective, run)[0]
    decision.guess = _climb(start, scored, consistent, objective, rng, run)
    return decision


def _decide_optimal(n: int, k: int, history: History, seed: int, samples: int, session: _Session) -> Decision:
    """The stored optimal tree's guess; a history that left the tree is searched live while few codes fit
    it, else `best` plays and `note` says why."""
    # imported here, so that `python -m puzzles.mastermind.optimal` is not imported twice
    from puzzles.mastermind.optimal import LIVE_LIMIT, follow, live_guess, parse_code, stored_tree

    tree = stored_tree(n, k)
    if tree is None:
        decision = decide(n, k, history, "best", seed, samples, session)
        decision.note = f"no optimal strategy is stored for {n}×{k}: best played instead"
        return decision
    codes = _consistent_codes(n, k, history)
    if not codes:
        return Decision(None, "optimal", 0, conflict=conflicting_entries(n, k, history, session))
    node = follow(tree, history)
    if node is not None:
        return Decision(parse_code(node["guess"]), "optimal", len(codes), len(codes))
    if len(codes) <= LIVE_LIMIT:
        return Decision(live_guess(n, k, history, list(codes)), "optimal", len(codes), len(codes))
    decision = decide(n, k, history, "best", seed, samples, session)
    decision.note = (
        f"the history left the optimal tree with {len(codes)} codes fitting it (searched live up to "
        f"{LIVE_LIMIT}): best played instead"
    )
    return decision


def decide(
    n: int,
    k: int,
    history: History,
    strategy: str = "best",
    seed: int = 0,
    samples: int = DEFAULT_SAMPLES,
    session: _Session | None = None,
) -> Decision:
    """The next guess after `history` (which must not contain the secret yet) with `strategy`."""
    session = session or _Session(Run())
    if strategy == "consistent":
        return _decide_consistent(n, k, history, session)
    if strategy == "optimal":
        return _decide_optimal(n, k, history, seed, samples, session)
    if strategy == "minimax":
        if k**n <= MINIMAX_LIMIT:
            return _decide_listed(n, k, history, "minimax", seed, session)
        decision = decide(n, k, history, "best", seed, samples, session)
        decision.note = f"minimax scores every code, so it needs k**n ≤ {MINIMAX_LIMIT}: best played instead"
        return decision
    if strategy != PREVIOUS:
        # the first two turns where a book is stored, the third and fourth where stored
        move = book_move(n, k, history) or third_move(n, k, history) or fourth_move(n, k, history)
        if move is not None:
            return Decision(move[0], "best", move[1], move[1])
        # the middle game plays only above the end game's size (disjoint from where decide_best's end game
        # plays), so asking it first changes no 6×9 guess and lets it take over from `stronger` at 7×7
        played = decide_middle(n, k, history, _rng(seed, history), session.run)
        if played is None:
            played = decide_best(n, k, history, seed, samples, session)
        if played is not None:
            return played
    if k**n <= ENUM_LIMIT:
        return _decide_listed(n, k, history, "parts", seed, session)
    return _decide_sampled(n, k, history, seed, samples, session)
