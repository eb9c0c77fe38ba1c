"""Strategy `optimal`: the least total number of guesses over every secret (the expected-case optimum), found
by a search of the game tree, and stored per size as a decision tree in `optimal_trees.json`.

Rebuild the stored trees (each size's search, then its check) with

    nice python -m puzzles.mastermind.optimal --n 4 --k 6 --out puzzles/mastermind/optimal_trees.json

(it prints each first guess as the search settles it: its total when it is the best so far, else a bound).

The search (`Search.solve`) minimises, for a set S of codes still possible, the total number of guesses
still to make over its secrets: cost(S) = min over guesses g of |S| + Σ cost(part) over the parts S splits
into by feedback to g, but the part of g itself (all black), which is done. Pruned by:

* a sound lower bound per set size (`Bounds`): one guess finds at most one secret at once and splits the rest
  into at most B parts (B = the feedbacks other than all black), so at most B**(d-1) secrets are found
  with the d-th guess from here; a set of s ≥ 2 codes also costs at least 2s - 1;
* branch and bound: guesses are tried in order of their lower bound (|S| + Σ bound(part)), a guess whose
  bound reaches the best total so far is dropped, and a part is solved only below the budget left;
* a dynamic floor: before a guess's parts are solved, each part of DYNAMIC_FROM codes or more is bounded by
  its own best one-guess split (the least over the guesses of |P| + Σ bound(sub-part); memoised), so the
  budget each part gets is what its siblings' floors leave, not what their size alone leaves;
* symmetry: a guess is tried only if it is the least of its class under the permutations of positions and
  colours that fix every guess so far (they map S onto itself, so equivalent guesses cost the same), and
  of the guesses that split S into the very same parts (with their own win or not) only one (partitions
  told apart by a hash of their rows, every row then checked against its representative);
* at once: a set that a guess inside it splits into singletons costs 2s - 1 (the bound), one that any guess
  splits into singletons 2s; results are memoised per set (exact, or a lower bound when cut off).

Codes are indexes into the lexicographic list of every code; feedback is one table of k**n × k**n classes
(numpy). This module does not import Z3.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

Tree = dict[str, Any]

#: the file of stored trees, inside this package
TREES_FILE = "optimal_trees.json"
#: a search with a `stop` calls it every this many sets searched
STOP_EVERY = 64
#: a part of at least this many codes is bounded by its best one-guess split before its siblings are solved
DYNAMIC_FROM = 12


def _all_codes(n: int, k: int) -> np.ndarray:
    index = np.arange(k**n, dtype=np.int64)
    return np.stack([index // k ** (n - 1 - i) % k for i in range(n)], 1).astype(np.int8).reshape(k**n, n)


def feedback_table(n: int, k: int) -> np.ndarray:
    """class[g, s] = black × (n + 1) + black + white of guess g against secret s (uint8), every code."""
    codes = _all_codes(n, k)
    counts = np.stack([(codes == c).sum(1) for c in range(k)], 1).astype(np.int16)
    table = np.empty((len(codes), len(codes)), dtype=np.uint8)
    step = max(1, 4_000_000 // (len(codes) * max(n, k)))
    for start in range(0, len(codes), step):
        rows = slice(start, start + step)
        black = (codes[rows, None, :] == codes[None, :, :]).sum(2)
        common = np.minimum(counts[rows, None, :], counts[None, :, :]).sum(2)
        table[rows] = black * (n + 1) + common
    return table


class Bounds:
    """A sound lower bound on cost(S) by |S| alone (see the module docstring)."""

    def __init__(self, n: int, size: int):
        branches = (n + 1) * (n + 2) // 2 - 2  # feedbacks but all black and (n - 1, 1)
        self.table = [0] * (size + 1)
        for s in range(1, size + 1):
            total, left, depth = 0, s, 1
            while left:
                found = min(left, branches ** (depth - 1))
                total, left, depth = total + found * depth, left - found, depth + 1
            self.table[s] = max(total, 2 * s - 1)
        self.array = np.asarray(self.table, dtype=np.int64)

    def __call__(self, s: int) -> int:
        return self.table[s]


def _distinct_rows(rows: np.ndarray) -> np.ndarray:
    """Indexes of the first of each distinct row of `rows` (int64), in row order: rows are told apart by a
    random linear hash, and every row is then compared with its representative, so that a collision falls
    back to the exact (slower) row sort."""
    weights = _hash_weights(rows.shape[1])
    hashes = rows @ weights
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    if not (rows == rows[first[inverse]]).all():
        _, first = np.unique(rows, axis=0, return_index=True)
    return np.sort(first)


@lru_cache(maxsize=256)
def _hash_weights(width: int) -> np.ndarray:
    weights: np.ndarray = np.random.default_rng(width).integers(1, 1 << 62, size=width, dtype=np.int64)
    return weights


@dataclass
class _Split:
    """How each guess of a pool splits a set of s secrets: rows[i] are the feedback classes of guess
    pool[i] against the secrets; sizes[i] the parts' sizes (its own win zeroed); lower[i] its lower bound;
    least the least of those."""

    classes: int
    pool: np.ndarray
    rows: np.ndarray
    sizes: np.ndarray
    won: np.ndarray
    lower: np.ndarray
    least: int = field(init=False)

    def __post_init__(self) -> None:
        self.least = int(self.lower.min())

    def order(self, limit: int) -> np.ndarray:
        """The guesses worth trying below `limit`, one per distinct partition (with its own win or not),
        the least lower bound first, winning guesses first among equals."""
        keep = np.flatnonzero(self.lower < limit)
        s = self.rows.shape[1]
        # relabel each row by first appearance, so that equal partitions have equal rows
        first = np.full(len(keep) * self.classes, s, dtype=np.int64)
        labels = self.rows[keep] + self.classes * np.arange(len(keep))[:, None]
        np.minimum.at(first, labels.ravel(), np.tile(np.arange(s), len(keep)))
        keep = keep[_distinct_rows(np.concatenate([first[labels], self.won[keep, None]], 1))]
        ordered: np.ndarray = keep[np.lexsort((self.pool[keep], ~self.won[keep], self.lower[keep]))]
        return ordered

    def parts(self, secrets: np.ndarray, index: int) -> list[np.ndarray]:
        """The parts guess pool[index] leaves (not its own win), the largest first."""
        row = self.rows[index]
        labels = np.flatnonzero(self.sizes[index]).tolist()
        labels.sort(key=lambda c: -self.sizes[index, c])
        return [secrets[row == c] for c in labels]


Symmetry = tuple[tuple[int, ...], dict[int, int]]


def _stabiliser(n: int, k: int, guesses: list[tuple[int, ...]]) -> list[Symmetry]:
    """The (position permutation, colour map on the colours used) pairs that fix every guess: position i goes
    to perm[i] and colour c to cmap[c]; the colours no guess used may be permuted freely."""
    used = sorted({c for g in guesses for c in g})
    group = []
    for perm in itertools.permutations(range(n)):
        cmap: dict[int, int] = {}
        ok = True
        for g in guesses:
            for i in range(n):
                # the image of g has colour cmap[g[i]] at perm[i]; it must equal g
                if cmap.setdefault(g[i], g[perm[i]]) != g[perm[i]]:
                    ok = False
                    break
            if not ok:
                break
        if ok and len(set(cmap.values())) == len(cmap) and set(cmap) == set(used):
            group.append((perm, cmap))
    return group


def canonical_guesses(n: int, k: int, guesses: list[tuple[int, ...]]) -> np.ndarray:
    """Indexes of the codes that are the least of their class under the permutations fixing `guesses`."""
    codes = _all_codes(n, k).astype(np.int64)
    used = {c for g in guesses for c in g}
    free = [c for c in range(k) if c not in used]
    powers = k ** np.arange(n - 1, -1, -1, dtype=np.int64)
    best = np.full(len(codes), len(codes), dtype=np.int64)
    rows = np.arange(len(codes))
    for perm, cmap in _stabiliser(n, k, guesses):
        image = np.empty_like(codes)
        lookup = np.arange(k)
        for c, d in cmap.items():
            lookup[c] = d
        image[:, list(perm)] = lookup[codes]
        # free colours renamed by first appearance, lowest first
        rename = np.full((len(codes), k), -1, dtype=np.int64)
        taken = np.zeros(len(codes), dtype=np.int64)
        for i in range(n):
            colour = image[:, i]
            is_free = np.isin(colour, free)
            new = is_free & (rename[rows, colour] < 0)
            if free:
                rename[rows[new], colour[new]] = np.asarray(free)[taken[new]]
            taken += new
            image[is_free, i] = rename[rows[is_free], colour[is_free]]
        best = np.minimum(best, image @ powers)
    return np.flatnonzero(best == rows)


class Search:
    """The expected-case optimum for n positions and k colours (see the module docstring)."""

    def __init__(
        self,
        n: int,
        k: int,
        symmetric_depth: int = 3,
        dynamic_from: int = DYNAMIC_FROM,
        table: np.ndarray | None = None,
    ):
        """Every code a secret and a guess; or, given `table` (the feedback classes of some guesses, rows,
        against some secrets, columns, the secrets being the first guesses), that local game, without
        symmetry."""
        self.n, self.k = n, k
        #: parts of at least this many codes are bounded by their best one-guess split (see `floor`)
        self.dynamic_from = dynamic_from
        #: every code a secret and a guess: the table is square and symmetric
        self.whole = table is None
        self.codes = _all_codes(n, k) if table is None else np.empty((0, n), dtype=np.int8)
        self.table = feedback_table(n, k) if table is None else table
        self.win = n * (n + 1) + n
        self.classes = (n + 1) * (n + 1)
        self.bound = Bounds(n, self.table.shape[1])
        self.memo: dict[bytes, tuple[int, bool, int]] = {}  # set → (cost or lower bound, exact, guess)
        self.symmetric_depth = symmetric_depth if table is None else 0
        self.everything = np.arange(len(self.table), dtype=np.int64)
        self.nodes = 0
        #: called every STOP_EVERY sets searched (a run's raise_if_stopped: a stopped job ends the search)
        self.stop: Callable[[], None] | None = None
        #: called after each first guess the search of every code tried: (guess, its total if it is the
        #: best so far, else a lower bound at or above the best, best so far)
        self.opening: Callable[[int, int, bool], None] | None = None

    @lru_cache(maxsize=4096)  # noqa: B019 (one Search per size, kept for its run)
    def candidates(self, guesses: tuple[int, ...]) -> np.ndarray:
        if len(guesses) >= self.symmetric_depth:
            return self.everything
        return canonical_guesses(self.n, self.k, [tuple(self.codes[g].tolist()) for g in guesses])

    def _candidates_for(self, guesses: tuple[int, ...] | None) -> np.ndarray:
        if guesses is None or len(guesses) >= self.symmetric_depth:
            return self.everything
        return self.candidates(tuple(sorted(guesses)))

    def solve(
        self, secrets: np.ndarray, limit: int | None = None, guesses: tuple[int, ...] | None = None
    ) -> int:
        """cost(secrets) when it is below `limit` (exactly); otherwise some lower bound ≥ limit.
        `guesses` are the guesses that left exactly `secrets` (from every code), for symmetry: then only
        canonical guesses are tried; None (not known) tries every code."""
        s = len(secrets)
        if s <= 2:
            return 2 * s - 1
        limit = limit if limit is not None else 1 << 60
        key = secrets.tobytes()
        known = self.memo.get(key)
        if known is not None and (known[1] or known[0] >= limit):
            return known[0]
        bound = self.bound(s)
        if bound >= limit:
            return bound
        self.nodes += 1
        if self.stop is not None and self.nodes % STOP_EVERY == 0:
            self.stop()
        split = self._split(secrets, guesses)
        if isinstance(split, int):
            return split
        best_cost, best_guess = limit, -1
        for index in split.order(limit).tolist():
            if split.lower[index] >= best_cost:
                break
            g = int(split.pool[index])
            after = None if guesses is None else (*guesses, g)
            parts = split.parts(secrets, index)
            floors = [self.floor(part, after) for part in parts]
            total, remaining = s, sum(floors)
            if total + remaining < best_cost:
                for part, floor in zip(parts, floors, strict=True):
                    remaining -= floor
                    total += self.solve(part, best_cost - total - remaining, after)
                    if total + remaining >= best_cost:
                        break
                else:
                    best_cost, best_guess = total, g
            if guesses == () and self.opening is not None:
                self.opening(g, total + remaining, best_guess == g)
        if best_guess >= 0:
            self.memo[key] = (best_cost, True, best_guess)
            return best_cost
        floor = max(limit, bound, split.least)
        self.memo[key] = (floor, False, -1)
        return floor

    def floor(self, secrets: np.ndarray, guesses: tuple[int, ...] | None) -> int:
        """A lower bound on cost(secrets): what is known of it, else (for sets of `dynamic_from` codes or
        more) the least over the guesses of |S| + Σ bound(part), else bound(|S|)."""
        s = len(secrets)
        if s <= 2:
            return 2 * s - 1
        key = secrets.tobytes()
        known = self.memo.get(key)
        if known is not None:
            return known[0]
        if s < self.dynamic_from:
            return self.bound(s)
        split = self._split(secrets, guesses)
        if isinstance(split, int):
            return split
        floor = max(self.bound(s), split.least)
        self.memo[key] = (floor, False, -1)
        return floor

    def _split(self, secrets: np.ndarray, guesses: tuple[int, ...] | None) -> _Split | int:
        """How each candidate guess splits `secrets`; or, when a guess tells every secret apart at once,
        the exact cost (memoised)."""
        s = len(secrets)
        key = secrets.tobytes()
        pool = self._candidates_for(guesses)
        if self.whole:  # the table is symmetric: column g of these rows is guess g's row
            columns = self.table[secrets]
            inside = columns[:, secrets]
            rows = (columns if len(pool) == len(self.everything) else columns[:, pool]).T.astype(np.int64)
        else:
            inside = self.table[np.ix_(secrets, secrets)]
            rows = self.table[np.ix_(pool, secrets)].astype(np.int64)
        # a guess inside that tells every other secret apart: the bound 2s - 1 is reached
        ordered = np.sort(inside, axis=1)
        distinct = 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(1)
        perfect = np.flatnonzero(distinct == s)
        if len(perfect):
            self.memo[key] = (2 * s - 1, True, int(secrets[perfect[0]]))
            return 2 * s - 1
        flat = (rows + self.classes * np.arange(len(pool))[:, None]).ravel()
        sizes = np.bincount(flat, minlength=self.classes * len(pool)).reshape(len(pool), self.classes)
        won = sizes[:, self.win] > 0
        parts = (sizes > 0).sum(1)
        if (parts == s).any():  # a guess outside telling all apart (none inside does): 2s
            g = int(pool[np.flatnonzero(parts == s)[0]])
            self.memo[key] = (2 * s, True, g)
            return 2 * s
        # lower bound per guess: s + Σ bound(part), the guess's own part (all black) done
        sizes[:, self.win] = 0
        lower = s + self.bound.array[sizes].sum(1)
        lower[parts == 1] = 1 << 60  # a guess that tells nothing
        return _Split(self.classes, pool, rows, sizes, won, lower)

    def optimum(self) -> int:
        """The least total guesses over every code."""
        return self.solve(self.everything, None, ())

    def tree(self, secrets: np.ndarray | None = None, guesses: tuple[int, ...] | None = None) -> Tree:
        """The decision tree of an optimal strategy for `secrets` (all codes by default), as
        {"guess": "1123", "next": {"b,w": subtree}}; a leaf (one secret left) is {"guess": code}."""
        if secrets is None:
            secrets, guesses = self.everything, ()
        if len(secrets) == 1:
            return {"guess": self.text(int(secrets[0]))}
        if len(secrets) == 2:
            g = int(secrets[0])
        else:
            self.solve(secrets, None, guesses)
            cost, exact, g = self.memo[secrets.tobytes()]
            assert exact
        row = self.table[g, secrets]
        branches = {}
        for c in sorted(set(row.tolist())):
            if c == self.win:
                continue
            black, common = divmod(c, self.n + 1)
            after = None if guesses is None else (*guesses, g)
            branches[f"{black},{common - black}"] = self.tree(secrets[row == c], after)
        return {"guess": self.text(g), "next": branches}

    def text(self, index: int) -> str:
        if not self.whole:
            raise ValueError("a search on a local table knows its guesses by row only, not as codes")
        return (
            "".join(str(c) for c in self.codes[index].tolist())
            if self.k <= 10
            else ",".join(str(c) for c in self.codes[index].tolist())
        )


def parse_code(text: str) -> tuple[int, ...]:
    return tuple(int(c) for c in text.split(",")) if "," in text else tuple(int(c) for c in text)


def _score(secret: tuple[int, ...], guess: tuple[int, ...]) -> tuple[int, int]:
    black = sum(a == b for a, b in zip(secret, guess, strict=True))
    common = sum(min(secret.count(c), guess.count(c)) for c in set(guess))
    return black, common - black


def walk(tree: Tree, secret: tuple[int, ...]) -> list[tuple[tuple[int, ...], int, int]]:
    """The game `tree` plays against `secret`: [(guess, black, white)], feedback scored by hand."""
    history = []
    node: Tree | None = tree
    while node is not None:
        guess = parse_code(node["guess"])
        black, white = _score(secret, guess)
        history.append((guess, black, white))
        if black == len(secret):
            return history
        node = node.get("next", {}).get(f"{black},{white}")
    raise ValueError(f"the tree has no branch for secret {secret} after {history}")


def check(tree: Tree, n: int, k: int) -> dict[str, int]:
    """Play every secret by `tree` (feedback scored by hand): every game must end on its secret.
    Returns the total guesses, the secrets and the most guesses."""
    total, most = 0, 0
    for secret in itertools.product(range(k), repeat=n):
        turns = len(walk(tree, secret))
        total, most = total + turns, max(most, turns)
    return {"total": total, "secrets": k**n, "max": most}


@lru_cache(maxsize=1)
def stored_trees() -> dict[str, Any]:
    """Every stored size: {"4x6": {"n", "k", "total", "seconds", "tree"}}."""
    try:
        text = resources.files("puzzles.mastermind").joinpath(TREES_FILE).read_text()
    except FileNotFoundError:
        return {}
    trees: dict[str, Any] = json.loads(text)
    return trees


def stored_sizes() -> list[tuple[int, int]]:
    return sorted((entry["n"], entry["k"]) for entry in stored_trees().values())


def stored_tree(n: int, k: int) -> Tree | None:
    entry = stored_trees().get(f"{n}x{k}")
    return entry["tree"] if entry else None


def follow(tree: Tree, history: Any) -> Tree | None:
    """The node of `tree` reached by `history` ((guess, black, white) entries), or None if the history
    left the tree (a guess the tree would not have made)."""
    node: Tree | None = tree
    for guess, black, white in history:
        if node is None or parse_code(node["guess"]) != tuple(guess):
            return None
        node = node.get("next", {}).get(f"{black},{white}")
    return node


#: a history that left the stored tree is searched live while at most this many codes fit it
LIVE_LIMIT = 150


@lru_cache(maxsize=2)
def _live_search(n: int, k: int) -> Search:
    return Search(n, k)


def live_guess(n: int, k: int, history: Any, secrets: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The optimal next guess for the codes `secrets` that fit `history` (searched now: keep them few)."""
    search = _live_search(n, k)
    powers = [k ** (n - 1 - i) for i in range(n)]
    indexes = np.array(sorted(sum(c * p for c, p in zip(code, powers, strict=True)) for code in secrets))
    if len(indexes) <= 2:
        return secrets[0]
    guesses = tuple(sorted(sum(c * p for c, p in zip(g, powers, strict=True)) for g, _, _ in history))
    search.solve(indexes, None, guesses)
    return tuple(search.codes[search.memo[indexes.tobytes()][2]].tolist())


def iter_nodes(tree: Tree) -> Iterator[Tree]:
    yield tree
    for child in tree.get("next", {}).values():
        yield from iter_nodes(child)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Search the expected-case optimal Mastermind strategy.")
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--k", type=int, required=True)
    parser.add_argument("--out", help="add the tree to this JSON file of trees (else only print the total)")
    parser.add_argument("--symmetric-depth", type=int, default=3)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    search = Search(args.n, args.k, args.symmetric_depth)

    def opening(guess: int, total: int, best: bool) -> None:
        value = f"total {total}" if best else f"at least {total}"
        elapsed = time.perf_counter() - started
        print(f"  first guess {search.text(guess)}: {value} ({elapsed:.1f} s)", flush=True)

    search.opening = opening
    total = search.optimum()
    seconds = time.perf_counter() - started
    tree = search.tree()
    result = check(tree, args.n, args.k)
    assert result["total"] == total, (result, total)
    print(
        f"{args.n}x{args.k}: total {total} over {args.k**args.n} secrets (avg {total / args.k**args.n:.4f}),"
        f" most {result['max']} guesses; search {seconds:.1f} s, {search.nodes} sets searched",
        flush=True,
    )
    if args.out:
        try:
            with open(args.out) as handle:
                trees = json.load(handle)
        except FileNotFoundError:
            trees = {}
        trees[f"{args.n}x{args.k}"] = {
            "n": args.n,
            "k": args.k,
            "total": total,
            "max": result["max"],
            "seconds": round(seconds, 1),
            "tree": tree,
        }
        with open(args.out, "w") as handle:
            json.dump(dict(sorted(trees.items())), handle, separators=(",", ":"))
            handle.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
