"""Strategy `best` when k**n > ENUM_LIMIT: the candidates are sampled consistent codes.

While `split_fits`, the consistent codes are counted exactly by meeting in the middle and drawn uniformly:
all of them when at most SPLIT_LIST_LIMIT (fewest expected turns wins), else SPLIT_TARGETS draws (largest
feedback entropy wins); the candidates are `samples` of those codes, scored with numpy and refined by hill
climbing. Larger spaces sample uniformly by rejection while consistent codes are common enough, else take
`samples` distinct SAT models (when that is all of them, the most parts wins); otherwise the largest
feedback entropy over the sample wins, refined by hill climbing unless the sample is a biased SAT one.
"""

from __future__ import annotations

import random
from typing import cast

import numpy as np

from puzzles.mastermind.codes import Code, History, _feedback_class, _Targets, score
from puzzles.mastermind.model import _sat_sample, _Session, conflicting_entries, sat_models
from puzzles.mastermind.scoring import Decision, _climb, _opening, _pick, _rng
from puzzles.mastermind.split import _Split, _TooManyPairs, split_fits
from puzzles.runtime import Run

#: rejection sampling: the consistent codes wanted, the draws allowed, and the fewest that count as enough
REJECTION_TARGETS = 400
REJECTION_TRIES = 40_000
REJECTION_ENOUGH = 100
#: _Split lists every consistent code up to this many, else draws SPLIT_TARGETS of them uniformly
SPLIT_LIST_LIMIT = 1_000
SPLIT_TARGETS = 600


def _classes_matrix(candidates: np.ndarray, targets: np.ndarray, k: int) -> np.ndarray:
    """The feedback class (as _feedback_class) of every candidate row against every target row."""
    n = candidates.shape[1]
    black = (candidates[:, None, :] == targets[None, :, :]).sum(2)
    candidate_counts = np.stack([(candidates == c).sum(1) for c in range(k)], 1)
    target_counts = np.stack([(targets == c).sum(1) for c in range(k)], 1)
    common = np.minimum(candidate_counts[:, None, :], target_counts[None, :, :]).sum(2)
    return cast(np.ndarray, black * (n + 1) + common)


def _fitting(candidates: np.ndarray, history: History, k: int) -> np.ndarray:
    """Which candidate rows fit every history entry."""
    guesses = np.array([g for g, _, _ in history], dtype=np.int8)
    wanted = np.array([_feedback_class(len(g), b, w) for g, b, w in history])
    return cast(np.ndarray, (_classes_matrix(candidates, guesses, k) == wanted).all(1))


def _split_pick(
    candidates: np.ndarray, targets: np.ndarray, history: History, objective: str, k: int
) -> tuple[int, tuple[float, bool]]:
    """The index of the candidate splitting `targets` best (ties to one that fits, then to the first)."""
    n = candidates.shape[1]
    classes = _classes_matrix(candidates, targets, k)
    width = (n + 1) * (n + 1)
    offsets = width * np.arange(len(candidates))[:, None]
    sizes = np.bincount((classes + offsets).ravel(), minlength=width * len(candidates))
    sizes = sizes.reshape(len(candidates), width).astype(np.float64)
    fits = _fitting(candidates, history, k)
    if objective == "parts":
        primary = (sizes > 0).sum(1).astype(np.float64)
    elif objective == "turns":
        # fewest turns still expected: a fitting candidate is the secret 1 time in len(targets), and then
        # its own part (of one) needs no further turn
        turns = (sizes * _turns_to_finish(sizes)).sum(1) - fits
        primary = np.round(-turns / len(targets), 9)
    else:  # entropy, as in _key
        primary = np.round(-(sizes * np.log(np.where(sizes > 1, sizes, 1))).sum(1), 9)
    best = int(np.lexsort((-np.arange(len(candidates)), fits, primary))[-1])
    return best, (float(primary[best]), bool(fits[best]))


def _turns_to_finish(sizes: np.ndarray) -> np.ndarray:
    """A rough estimate of the turns that finish a game once `sizes` codes are left (size 0: unused): 1 for
    one code, 1.5 for two (guess one), and for more a splitting guess plus ~0.6 turn per doubling."""
    return np.where(sizes <= 2, 0.5 + 0.5 * sizes, 2.0 + 0.6 * np.log2(np.maximum(sizes, 3) / 3))


def _split_climb(
    start: np.ndarray,
    targets: np.ndarray,
    history: History,
    objective: str,
    k: int,
    rng: random.Random,
    run: Run,
) -> Code:
    """Hill climbing from `start`, as _climb: recolour one position while that splits `targets` better."""
    n, best = len(start), start
    best_key = _split_pick(best[None, :], targets, history, objective, k)[1]
    for _ in range(8):
        run.raise_if_stopped()
        moves = [(i, c) for i in range(n) for c in range(k) if c != best[i]]
        if len(moves) > 120:
            moves = rng.sample(moves, 120)
        pool = np.repeat(best[None, :], len(moves), 0)
        pool[np.arange(len(moves)), [i for i, _ in moves]] = [c for _, c in moves]
        index, key = _split_pick(pool, targets, history, objective, k)
        if key <= best_key:
            break
        best, best_key = pool[index], key
    return tuple(best.tolist())


def _decide_split(n: int, k: int, history: History, rng: random.Random, samples: int, run: Run) -> Decision:
    """The largest feedback entropy over a uniform sample of the consistent codes (all of them, and the
    most parts, when they are few), counted exactly by _Split."""
    split = _Split(n, k, history, run)
    if split.count <= SPLIT_LIST_LIMIT:
        codes, objective = split.codes(), "turns"
    else:
        codes, objective = split.sample(rng, SPLIT_TARGETS), "entropy"
    decision = Decision(codes[0] if codes else None, "best", split.count, split.count)
    if split.count > 2:
        distinct = list(dict.fromkeys(codes))
        pool = np.array(rng.sample(distinct, min(samples, len(distinct))), dtype=np.int8)
        targets = np.array(codes, dtype=np.int8)
        start = pool[_split_pick(pool, targets, history, objective, k)[0]]
        decision.guess = _split_climb(start, targets, history, objective, k, rng, run)
    return decision


def _rejection_sample(n: int, k: int, history: History, rng: random.Random, run: Run) -> list[Code]:
    """Uniform consistent codes: draw random codes, keep the distinct ones that fit (in draw order)."""
    found: dict[Code, None] = {}
    checks = [(guess, _feedback_class(n, black, white)) for guess, black, white in history]
    colours = range(k)
    for attempt in range(REJECTION_TRIES):
        if attempt % 2048 == 0:
            run.raise_if_stopped()
            if attempt and len(found) * REJECTION_TRIES < attempt * REJECTION_ENOUGH:
                break  # on course to find too few: leave it to the SAT solver
        code = tuple(rng.choices(colours, k=n))
        if all(_feedback_class(n, *score(code, guess)) == cls for guess, cls in checks):
            found[code] = None
            if len(found) >= REJECTION_TARGETS:
                break
    return list(found)


def _decide_sampled(n: int, k: int, history: History, seed: int, samples: int, session: _Session) -> Decision:
    """k**n > ENUM_LIMIT: the largest feedback entropy over sampled consistent codes."""
    run, rng = session.run, _rng(seed, history)
    if not history:
        return Decision(_opening(n, k, "entropy", seed, run), "best", k**n, k**n)
    if split_fits(n, k):
        try:
            decision = _decide_split(n, k, history, rng, samples, run)
        except _TooManyPairs:
            pass
        else:
            if decision.guess is None:
                decision.conflict = conflicting_entries(n, k, history, session)
            return decision
    codes = _rejection_sample(n, k, history, rng, run)
    uniform, exact = len(codes) >= min(samples, REJECTION_ENOUGH), False
    if not uniform:
        codes, exact = _sat_sample(n, k, history, sat_models(n, k, samples), rng, session)
        if not codes:
            return Decision(None, "best", 0, conflict=conflicting_entries(n, k, history, session))
    decision = Decision(codes[0], "best", len(codes) if exact else None, len(codes))
    if len(codes) > 2:
        objective = "parts" if exact else "entropy"
        targets, consistent = _Targets(codes, k), set(codes)
        guess = _pick(codes[:samples], targets, consistent, objective, run)[0]
        if uniform or exact:
            # a biased SAT sample would only teach the climb that sample's quirks
            guess = _climb(guess, targets, consistent, objective, rng, run)
        decision.guess = guess
    return decision
