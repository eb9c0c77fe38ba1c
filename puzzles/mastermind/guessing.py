"""Kind `mastermind.guess`: the next guess for a history of feedback.

Result: `status` ("ok", "solved", "contradiction"), `guess`, `consistent`, `remaining` (exactly how many
codes fit the history, or None when that is not known), `remaining_at_least` (a lower bound: equal to
`remaining` when that is known, else the distinct fitting codes seen), `strategy` (the one that played),
`note` (why it differs from the one asked, or None), `seconds`, and for a contradiction `error` =
{code: 422, message, entries: [history indexes of a minimal conflicting set]}.

Where Z3 picks the guess, a `guess` call can pick a different, equally valid, code than a game did at the
same history: Z3's models depend on what ran before in the same context, and a play shard keeps one.
"""

from __future__ import annotations

import time
from typing import Any

from puzzles.mastermind.codes import History, _fits, score
from puzzles.mastermind.model import COUNT_CAP, _Session, count_consistent, sat_models
from puzzles.mastermind.strategies import DEFAULT_SAMPLES, decide
from puzzles.runtime import Run


def history_of(params: dict[str, Any]) -> History:
    return tuple((tuple(e["guess"]), e["black"], e["white"]) for e in params.get("history") or [])


def _describe(history: History, entries: list[int]) -> str:
    return "; ".join(
        f"#{i} {list(history[i][0])} → {history[i][1]} black {history[i][2]} white" for i in entries
    )


def _contradiction(history: History, entries: list[int], strategy: str, started: float) -> dict[str, Any]:
    which = "guess" if len(entries) == 1 else "guesses"
    message = f"no code fits the feedback of history {which} {_describe(history, entries)}"
    return {
        "status": "contradiction",
        "guess": None,
        "consistent": False,
        "remaining": 0,
        "remaining_at_least": 0,
        "strategy": strategy,
        "note": None,
        "seconds": time.perf_counter() - started,
        "error": {"code": 422, "message": message, "entries": entries},
    }


def guess(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """Kind `mastermind.guess`: the next guess for a history (see the module docstring for the result)."""
    with run.interruptible():
        return _guess(params, run)


def _guess(params: dict[str, Any], run: Run) -> dict[str, Any]:
    started = time.perf_counter()
    n, k = params["n"], params["k"]
    history = history_of(params)
    strategy = params.get("strategy") or "best"
    session = _Session(run)
    solved = next((i for i, (_, black, _) in enumerate(history) if black == n), None)
    if solved is not None:
        secret = history[solved][0]
        wrong = [i for i, (g, b, w) in enumerate(history) if score(secret, g) != (b, w)]
        if wrong:
            return _contradiction(history, sorted({solved, *wrong}), strategy, started)
        return {
            "status": "solved",
            "guess": list(secret),
            "consistent": True,
            "remaining": 1,
            "remaining_at_least": 1,
            "strategy": strategy,
            "note": None,
            "seconds": time.perf_counter() - started,
        }
    decision = decide(
        n, k, history, strategy, params.get("seed") or 0, params.get("samples") or DEFAULT_SAMPLES, session
    )
    if decision.guess is None:
        return _contradiction(
            history, decision.conflict or list(range(len(history))), decision.strategy, started
        )
    remaining, at_least = decision.remaining, decision.remaining_at_least
    cap = sat_models(n, k, COUNT_CAP)
    if remaining is None and at_least < cap:
        counted, exact = count_consistent(n, k, history, session, cap)
        remaining, at_least = (counted if exact else None), max(at_least, counted)
    return {
        "status": "ok",
        "guess": list(decision.guess),
        "consistent": _fits(decision.guess, history),
        "remaining": remaining,
        "remaining_at_least": at_least,
        "strategy": decision.strategy,
        "note": decision.note,
        "seconds": time.perf_counter() - started,
    }
