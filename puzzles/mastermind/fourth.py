"""A fourth-turn book for strategy `best` at 6×9: after the three book guesses (`book`, `third`), for each
part that leaves more codes than the exact end game takes, the middle game's guess (`middle.choose`, with
the generator a live game of seed 0 would use), stored in `fourth_book.json`.

Why a book: there are only 657 such parts (201 to 2,335 codes each, 337,679 codes in all, since the end
game takes over from 200 codes; 1,595 parts from 70), the middle game spends a fifth of a second or more on
each, and more than half of the games meet one of them; stored, a game plays them at once, and a live game
of seed 0 plays exactly the same guess.

Rebuild it (and write it into the stored file) with

    nice python -m puzzles.mastermind.fourth --n 6 --k 9 --out puzzles/mastermind/fourth_book.json
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import numpy as np

from puzzles.mastermind.book import _code, _feedback_key, _text, build_command, load_books
from puzzles.mastermind.codes import Code, History
from puzzles.runtime import Run

#: the stored fourth-turn books, inside this package
FOURTH_FILE = "fourth_book.json"


def _key(history: History) -> str:
    return "|".join(_feedback_key(black, white) for _, black, white in history)


def _feedback(key: str) -> tuple[int, int]:
    black, white = map(int, key.split(","))
    return black, white


def parts(n: int, k: int) -> Iterator[tuple[History, np.ndarray]]:
    """Every history of the three book guesses that leaves more than PREVIOUS_ENDGAME codes, with the
    rows (of every code, lexicographic) that fit it."""
    from puzzles.mastermind.stronger import PREVIOUS_ENDGAME  # lazily: stronger imports this package
    from puzzles.mastermind.third import _key_of, _Size, stored_thirds

    size, book = _Size(n, k), stored_thirds()[f"{n}x{k}"]
    for first_key, entry in sorted(book["after"].items()):
        second, by_second = size.parts(first_key)
        for second_key, move in sorted(entry["third"].items()):
            third, rows = _code(move["guess"]), by_second[second_key]
            classes = size._classes_of(third, rows)
            for cls in np.unique(classes):
                fitting = rows[classes == cls]
                if len(fitting) <= PREVIOUS_ENDGAME:
                    continue
                keys = (first_key, second_key, _key_of(n, int(cls)))
                guesses = (size.first, second, third)
                yield tuple((g, *_feedback(key)) for g, key in zip(guesses, keys, strict=True)), fitting


def fourth_guess(n: int, k: int, history: History, codes: np.ndarray, run: Run) -> Code:
    """The middle game's guess for `history` (the codes that fit it: rows `codes`), as a live game of seed
    0 plays it."""
    from puzzles.mastermind.middle import choose  # lazily: see parts
    from puzzles.mastermind.scoring import _rng

    return choose(codes, n, k, _rng(0, history), run)


def build(n: int, k: int, log: Any = None, run: Run | None = None) -> dict[str, Any]:
    """The fourth-turn book of n×k (see the module docstring)."""
    from puzzles.mastermind.stronger import _codes_of  # lazily: see parts

    started, every, after = time.perf_counter(), _codes_of(n, k).astype(np.int8), {}
    run = run or Run()
    for history, rows in parts(n, k):
        guess = fourth_guess(n, k, history, every[rows], run)
        after[_key(history)] = {"guess": _text(guess), "left": int(len(rows))}
        if log and len(after) % 100 == 0:
            log(f"{n}x{k}: {len(after)} fourth guesses ({time.perf_counter() - started:.0f} s)")
    return {"n": n, "k": k, "after": after, "seconds": round(time.perf_counter() - started, 1)}


@lru_cache(maxsize=1)
def stored_fourths() -> dict[str, Any]:
    """Every stored fourth-turn book, by "nxk"."""
    return load_books(FOURTH_FILE)


def fourth_move(n: int, k: int, history: History) -> tuple[Code, int] | None:
    """The stored fourth guess for this history and how many codes fit it, or None when none is stored
    (another size, or guesses other than the books')."""
    from puzzles.mastermind.third import third_move  # lazily: see parts

    book = stored_fourths().get(f"{n}x{k}")
    if book is None or len(history) != 3:
        return None
    move = book["after"].get(_key(history))
    if move is None:
        return None
    third = third_move(n, k, history[:2])
    if third is None or third[0] != tuple(history[2][0]):
        return None  # the first two guesses are checked by third_move (the book's own)
    return _code(move["guess"]), move["left"]


def main(argv: list[str] | None = None) -> None:
    build_command(argv, name="fourth-turn book", build=build, made=lambda book: len(book["after"]))


if __name__ == "__main__":
    main()
