"""A third-turn book for strategy `best`: after the opening book's two guesses (`book`), for each pair of
feedbacks that leaves more codes than the strategy's exact end game takes, the third guess of the largest
feedback entropy over every code that fits, chosen among ALL codes (not only those that fit), offline, and
stored per size in `third_book.json`.

Rebuild a size (and write it into the stored file) with

    nice python -m puzzles.mastermind.third --n 6 --k 9 --out puzzles/mastermind/third_book.json

* Candidates: every code that is the least of its class under the position and colour permutations fixing
  the two guesses (`optimal.canonical_guesses`: colours neither guess used are interchangeable; equivalent
  codes split every part of the history alike).
* Per part (pair of feedbacks) of more than MIN_LEFT codes: a first pass scores every candidate against a
  uniform sample of at most SAMPLE of the part's codes (all of them when the part is smaller), and keeps the
  SHORTLIST best; those are scored against every code of the part, and the largest entropy wins, ties to a
  code that fits, then to the least code.
* Entropy is −Σ s·log s over the part sizes s, rounded to 9 digits (as in `book`). Feedback classes by
  `stronger._Engine`. This module does not import Z3.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any, cast

import numpy as np

from puzzles.mastermind.book import (
    _code,
    _feedback_key,
    _slog,
    _text,
    build_command,
    load_books,
    stored_books,
)
from puzzles.mastermind.codes import Code, History

#: the stored third-turn books, inside this package
THIRD_FILE = "third_book.json"
#: the sizes with a third-turn book, and the codes a part must leave for a stored guess (the end game of
#: `best` takes the rest; it took 40 at 8×6 and 70 at 6×9 when the book was built, and since takes up to
#: stronger.ENDGAME and stronger.PREVIOUS_ENDGAME codes once the books are spent: the book still plays
#: every part it holds)
MIN_LEFT = {(6, 9): 70, (7, 7): 120, (8, 6): 40}
#: the first pass: codes of a part sampled, candidates kept for the exact pass
SAMPLE = 600
SHORTLIST = 300
#: candidates at most, per size (6×9: every one): over it, a uniform draw of them (seeded by the size and the
#: first feedback), and the winner is then refined by hill climbing (one position recoloured at a time)
CANDIDATES = {(7, 7): 20_000, (8, 6): 20_000}
#: class evaluations per block
BLOCK_WORK = 8_000_000


def _class_of(n: int, key: str) -> int:
    black, white = map(int, key.split(","))
    return black * (n + 1) + black + white


def _key_of(n: int, cls: int) -> str:
    black = cls // (n + 1)
    return _feedback_key(black, cls - black * (n + 1) - black)


class _Size:
    """Every code of n×k, encoded, and the first guess's classes."""

    def __init__(self, n: int, k: int):
        from puzzles.mastermind.stronger import _codes_of, _engine  # lazily: stronger imports this package

        self.n, self.k = n, k
        self.book = stored_books()[f"{n}x{k}"]
        self.engine = _engine(n, k)
        self.codes = _codes_of(n, k).astype(np.int8)
        self.every = self.engine.encode(self.codes)
        self.first = _code(self.book["first"])
        self.first_classes = self._classes_of(self.first, np.arange(len(self.codes)))
        self.slog = _slog(len(self.codes))
        self.width = (n + 1) * (n + 1)

    def _classes_of(self, guess: Code, rows: np.ndarray) -> np.ndarray:
        encoded = self.engine.encode(np.array([guess], dtype=np.int8))
        return cast(np.ndarray, self.engine.classes(encoded, self.every[rows])[0].astype(np.int64))

    def parts(self, first_key: str) -> tuple[Code, dict[str, np.ndarray]]:
        """The second guess after `first_key`, and the rows of each part it leaves, by its feedback."""
        second = _code(self.book["second"][first_key]["guess"])
        rows = np.flatnonzero(self.first_classes == _class_of(self.n, first_key))
        classes = self._classes_of(second, rows)
        return second, {_key_of(self.n, int(c)): rows[classes == c] for c in np.unique(classes)}

    def _entropies(
        self, candidates: np.ndarray, targets: np.ndarray, labels: np.ndarray, count: int
    ) -> np.ndarray:
        """scores[i, p]: the entropy of candidate i's split of the targets labelled p."""
        out = np.empty((len(candidates), count), dtype=np.float64)
        step = max(1, BLOCK_WORK // max(1, len(targets)))
        base = labels.astype(np.int64) * self.width
        encoded = self.every[targets]
        for start in range(0, len(candidates), step):
            block = candidates[start : start + step]
            classes = self.engine.classes(self.every[block], encoded).astype(np.int64)
            flat = (classes + base[None, :] + (count * self.width) * np.arange(len(block))[:, None]).ravel()
            sizes = np.bincount(flat, minlength=count * self.width * len(block))
            out[start : start + step] = -self.slog[sizes.reshape(len(block), count, self.width)].sum(2)
        return np.round(out, 9)

    def _sample(self, first_key: str, key: str, rows: np.ndarray) -> np.ndarray:
        """At most SAMPLE of a part's rows, uniformly, seeded by the size and the part."""
        if len(rows) <= SAMPLE:
            return rows
        seed = [self.n, self.k, _class_of(self.n, first_key), _class_of(self.n, key)]
        return np.sort(np.random.default_rng(seed).choice(rows, SAMPLE, replace=False))

    def _climb(self, guess: int, score: float, rows: np.ndarray) -> int:
        """Hill climbing from code index `guess`: the best code one position away while that splits `rows`
        better (ties to a code that fits, then to the least)."""
        powers = self.k ** np.arange(self.n - 1, -1, -1, dtype=np.int64)
        while True:
            code = self.codes[guess].astype(np.int64)
            near = np.unique(
                [
                    guess + (colour - code[i]) * powers[i]
                    for i in range(self.n)
                    for colour in range(self.k)
                    if colour != code[i]
                ]
            )
            exact = self._entropies(near, rows, np.zeros(len(rows), dtype=np.int64), 1)[:, 0]
            fits = np.isin(near, rows)
            best = int(np.lexsort((-np.arange(len(near)), fits, exact))[-1])
            if exact[best] <= score:
                return guess
            guess, score = int(near[best]), float(exact[best])

    def third_guesses(self, first_key: str, only: set[str] | None = None) -> dict[str, dict[str, Any]]:
        """For each part after `first_key` (those in `only`, if given) of more than MIN_LEFT codes: its third
        guess and size."""
        from puzzles.mastermind.optimal import canonical_guesses  # lazily: see _Size

        second, parts = self.parts(first_key)
        win = _key_of(self.n, self.n * (self.n + 1) + self.n)
        wanted = [
            key
            for key, rows in sorted(parts.items())
            if len(rows) > MIN_LEFT[(self.n, self.k)] and key != win and (only is None or key in only)
        ]
        if not wanted:
            return {}
        candidates = canonical_guesses(self.n, self.k, [self.first, second])
        cap = CANDIDATES.get((self.n, self.k), len(candidates))
        capped = len(candidates) > cap
        if capped:
            seed = [self.n, self.k, _class_of(self.n, first_key)]
            candidates = np.sort(np.random.default_rng(seed).choice(candidates, cap, replace=False))
        samples = [self._sample(first_key, key, parts[key]) for key in wanted]
        labels = np.concatenate([np.full(len(s), p) for p, s in enumerate(samples)])
        rough = self._entropies(candidates, np.concatenate(samples), labels, len(wanted))
        out: dict[str, dict[str, Any]] = {}
        for p, key in enumerate(wanted):
            rows = parts[key]
            short = np.sort(candidates[np.argsort(-rough[:, p], kind="stable")[:SHORTLIST]])
            exact = self._entropies(short, rows, np.zeros(len(rows), dtype=np.int64), 1)[:, 0]
            fits = np.isin(short, rows)
            best = int(np.lexsort((-np.arange(len(short)), fits, exact))[-1])
            guess = int(short[best])
            if capped:
                guess = self._climb(guess, float(exact[best]), rows)
            out[key] = {"guess": _text(self.codes[guess]), "left": int(len(rows))}
        return out


def build(n: int, k: int, log: Any = None) -> dict[str, Any]:
    """The third-turn book of n×k (see the module docstring)."""
    started = time.perf_counter()
    size = _Size(n, k)
    third: dict[str, Any] = {}
    for first_key, entry in sorted(size.book["second"].items()):
        guesses = size.third_guesses(first_key)
        if guesses:
            third[first_key] = {"second": entry["guess"], "third": guesses}
        if log:
            log(f"{n}x{k}: {first_key}: {len(guesses)} third guesses ({time.perf_counter() - started:.0f} s)")
    return {
        "n": n,
        "k": k,
        "first": size.book["first"],
        "after": third,
        "seconds": round(time.perf_counter() - started, 1),
    }


@lru_cache(maxsize=1)
def stored_thirds() -> dict[str, Any]:
    """Every stored third-turn book, by "nxk"."""
    return load_books(THIRD_FILE)


def third_move(n: int, k: int, history: History) -> tuple[Code, int] | None:
    """The stored third guess for this history and how many codes fit it, or None when none is stored."""
    book = stored_thirds().get(f"{n}x{k}")
    if book is None or len(history) != 2:
        return None
    (first, black1, white1), (second, black2, white2) = history
    if _text(first) != book["first"]:
        return None
    entry = book["after"].get(_feedback_key(black1, white1))
    if entry is None or _text(second) != entry["second"]:
        return None
    move = entry["third"].get(_feedback_key(black2, white2))
    return (_code(move["guess"]), move["left"]) if move else None


def main(argv: list[str] | None = None) -> None:
    build_command(argv, name="third-turn book", build=build, made=_third_guesses)


def _third_guesses(book: dict[str, Any]) -> int:
    return sum(len(entry["third"]) for entry in book["after"].values())


if __name__ == "__main__":
    main()
