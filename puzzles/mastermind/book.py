"""An opening book for strategy `best` at the middle sizes: the first guess and, for each feedback to it, the
second guess, chosen offline by the largest feedback entropy over every code that fits (exactly, not over
a sample), and stored per size in `opening_book.json`.

Rebuild a size (and write it into the stored file) with

    nice python -m puzzles.mastermind.book --n 8 --k 6 --out puzzles/mastermind/opening_book.json

* First guess: FIRST where given: the opening that played best for the Entropy strategy in
  mikemag/Mastermind's study of first guesses (every game played with each; there in
  docs/initial_guesses/preset_initial_guesses.json), since the largest entropy of the first split is not
  the best first guess (at 5×8 00123 has it, while 00112 played best there). Else each opening pattern
  (`codes._openings`, one per partition of n: every first guess is equivalent to one of them) scored
  against every code.
* Second guess, per feedback that leaves more than MIN_LEFT codes: every code that is the least of its class
  under the position and colour permutations fixing the first guess (they map each feedback's codes onto
  themselves, so equivalent codes split them alike: `optimal.canonical_guesses`), scored against every code
  that fits, by the feedback classes of `stronger._Engine`; ties to a code that fits, then to the least.
  Where that is over EXACT_WORK class evaluations, every such code is first scored against a uniform sample
  of SAMPLE codes, and only the SHORTLIST best for each feedback are scored exactly.
  Feedbacks that leave at most MIN_LEFT codes are left to the strategy (its exact end game, which since
  takes parts of up to stronger.ENDGAME codes: between the two, the book's guess is played).

The third guesses at 6×9 and 8×6 are in a book of their own (`third`: every canonical code a candidate).

Entropy here is −Σ s·log s over the part sizes s (N × entropy up to a constant), rounded to 9 digits so that
equal splits tie. This module does not import Z3.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from puzzles.mastermind.codes import Code, History, _openings

#: the stored books, inside this package
BOOK_FILE = "opening_book.json"
#: a feedback that leaves at most this many codes gets no stored second guess (the strategy's end game; the
#: book was built when that took 40 codes, and is played above 40 still)
MIN_LEFT = 40
#: the first guess, where given (see the module docstring)
FIRST = {(5, 8): "00112", (6, 9): "001123", (7, 7): "0011223", (8, 6): "00011223"}
#: candidates × codes scored exactly at most; over it, a first pass against SAMPLE codes keeps SHORTLIST
#: candidates per feedback
EXACT_WORK = 2_000_000_000
SAMPLE = 100_000
SHORTLIST = 40
#: candidates scored per block (memory: BLOCK × k**n bytes, and 8× that for the counts)
BLOCK = 16


def _text(code: Code | np.ndarray) -> str:
    return "".join(str(int(c)) for c in code)


def _code(text: str) -> Code:
    return tuple(int(c) for c in text)


def _feedback_key(black: int, white: int) -> str:
    return f"{black},{white}"


def _slog(size: int) -> np.ndarray:
    sizes = np.arange(size + 1, dtype=np.float64)
    return sizes * np.log(np.maximum(sizes, 1))


def _joint_counts(
    engine: Any, candidates: np.ndarray, every: np.ndarray, first: np.ndarray, n: int
) -> np.ndarray:
    """counts[i, f, c]: the codes with feedback class f to the first guess and c to candidate i."""
    width = (n + 1) * (n + 1)
    out = np.empty((len(candidates), width, width), dtype=np.int64)
    base = first.astype(np.int64) * width
    for start in range(0, len(candidates), BLOCK):
        block = candidates[start : start + BLOCK]
        classes = engine.classes(block, every)
        flat = (classes + base[None, :] + (width * width) * np.arange(len(block))[:, None]).ravel()
        out[start : start + BLOCK] = np.bincount(flat, minlength=width * width * len(block)).reshape(
            len(block), width, width
        )
    return out


def build(n: int, k: int, log: Any = None) -> dict[str, Any]:
    """The book of n×k (see the module docstring)."""
    from puzzles.mastermind.optimal import canonical_guesses
    from puzzles.mastermind.stronger import _codes_of, _engine

    started = time.perf_counter()
    engine = _engine(n, k)
    codes = _codes_of(n, k).astype(np.int8)
    every = engine.encode(codes)
    slog = _slog(len(codes))
    width = (n + 1) * (n + 1)

    if (n, k) in FIRST:
        openings = np.array([_code(FIRST[(n, k)])], dtype=np.int8)
    else:
        openings = np.array(_openings(n, k), dtype=np.int8)
    classes = engine.classes(engine.encode(openings), every).astype(np.int64)
    sizes = np.stack([np.bincount(row, minlength=width) for row in classes])
    entropy = np.round(-slog[sizes].sum(1), 9)
    first_row = int(np.lexsort((-np.arange(len(openings)), entropy))[-1])
    first = openings[first_row]
    first_classes = classes[first_row]
    parts = np.bincount(first_classes, minlength=width)
    wanted = [cls for cls in np.flatnonzero(parts > MIN_LEFT).tolist() if cls != n * (n + 1) + n]

    candidates = canonical_guesses(n, k, [tuple(int(c) for c in first)])
    if log:
        log(f"{n}x{k}: first {_text(first)}, {len(candidates)} canonical second guesses")
    if len(candidates) * len(codes) > EXACT_WORK:
        # a first pass against a uniform sample of the codes, the SHORTLIST best per feedback kept
        sample = np.sort(np.random.default_rng(n * 100 + k).choice(len(codes), SAMPLE, replace=False))
        rough = np.round(
            -slog[_joint_counts(engine, every[candidates], every[sample], first_classes[sample], n)].sum(2), 9
        )
        keep = np.unique(
            np.concatenate([np.argsort(-rough[:, cls], kind="stable")[:SHORTLIST] for cls in wanted])
        )
        candidates = candidates[keep]
        if log:
            log(f"{n}x{k}: {len(candidates)} candidates kept for the exact pass")
    joint = _joint_counts(engine, every[candidates], every, first_classes, n)
    # entropy of each candidate's split of each first-feedback part
    scores = np.round(-slog[joint].sum(2), 9)  # [candidate, first class]
    second: dict[str, Any] = {}
    order = -np.arange(len(candidates))
    for cls in wanted:
        fits = first_classes[candidates] == cls
        best = int(np.lexsort((order, fits, scores[:, cls]))[-1])
        black = int(cls) // (n + 1)
        white = int(cls) - black * (n + 1) - black
        second[_feedback_key(black, white)] = {
            "guess": _text(codes[candidates[best]]),
            "left": int(parts[cls]),
        }
    return {
        "n": n,
        "k": k,
        "first": _text(first),
        "second": dict(sorted(second.items())),
        "seconds": round(time.perf_counter() - started, 1),
    }


def load_books(file: str) -> dict[str, Any]:
    """A books file of the package (e.g. BOOK_FILE), by "nxk"; empty if it is not there."""
    path = resources.files("puzzles.mastermind").joinpath(file)
    if not path.is_file():
        return {}
    books: dict[str, Any] = json.loads(path.read_text())
    return books


def save_book(out: str, n: int, k: int, book: dict[str, Any]) -> None:
    """Adds (or replaces) the book of size n×k in the books file `out`, sizes in order."""
    path = Path(out)
    books = json.loads(path.read_text()) if path.exists() else {}
    books[f"{n}x{k}"] = book
    ordered = dict(sorted(books.items(), key=lambda item: tuple(map(int, item[0].split("x")))))
    path.write_text(json.dumps(ordered, indent=1) + "\n")


@lru_cache(maxsize=1)
def stored_books() -> dict[str, Any]:
    """Every stored book, by "nxk"."""
    return load_books(BOOK_FILE)


def book_move(n: int, k: int, history: History) -> tuple[Code, int] | None:
    """The stored guess for this history (first or second turn) and how many codes fit the history, or
    None when the book has none."""
    book = stored_books().get(f"{n}x{k}")
    if book is None or len(history) > 1:
        return None
    if not history:
        return _code(book["first"]), k**n
    guess, black, white = history[0]
    if _text(guess) != book["first"]:
        return None
    entry = book["second"].get(_feedback_key(black, white))
    return (_code(entry["guess"]), entry["left"]) if entry else None


def build_command(
    argv: list[str] | None,
    *,
    name: str,
    build: Callable[..., dict[str, Any]],
    made: Callable[[dict[str, Any]], int],
) -> None:
    """A book's command line: build `name` (e.g. "opening book") for one size, then add it to --out's
    file or print it; `made` counts the guesses the book holds."""
    parser = argparse.ArgumentParser(description=f"Build the {name} of strategy best for one size.")
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--k", type=int, required=True)
    parser.add_argument("--out", help=f"the file of {name}s to add this size to (else print it)")
    args = parser.parse_args(argv)
    book = build(args.n, args.k, log=print)
    print(f"{args.n}x{args.k}: {made(book)} guesses in {book['seconds']} s")
    if args.out:
        save_book(args.out, args.n, args.k, book)
    else:
        print(json.dumps(book))


def main(argv: list[str] | None = None) -> None:
    build_command(argv, name="opening book", build=build, made=lambda book: len(book["second"]))


if __name__ == "__main__":
    main()
