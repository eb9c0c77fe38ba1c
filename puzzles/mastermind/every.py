"""A strategy played against every secret at once: its decision tree walked from the root.

Every guess is a function of the size, the strategy, the seed and the history (see the package
docstring), so a strategy is a decision tree and "every secret played" is one walk of it: a node is a
history and the codes that fit it, its guess splits them by feedback, and a secret's turns are the depth
at which the guess is the secret. Each history is decided once, however many secrets reach it, which
makes the exact average reachable where playing every secret one by one is not (8×6: 1,679,616 secrets).

`walk` writes the turns of every secret (by its index into every code, in `all_codes` order) into an array,
so a caller can leave out the secrets that tuned the strategy. A strategy whose guesses Z3 picks
(`consistent`, and `best` where it falls back to SAT sampling) is still walked as a valid tree, but Z3's
answers depend on what ran before in its context, so games can play another one (see the package
docstring). `subtrees` cuts the tree at a depth, so the
pieces can be walked in separate processes and their turns added.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from puzzles.mastermind.codes import Code, History
from puzzles.mastermind.model import _Session
from puzzles.mastermind.optimal import _all_codes
from puzzles.mastermind.sampled import _classes_matrix
from puzzles.mastermind.strategies import DEFAULT_SAMPLES, decide
from puzzles.runtime import Run

#: a node: its history, and the indexes (into every code) of the secrets that reach it
Node = tuple[History, np.ndarray]


class Walker:
    """Walks one strategy's tree at n×k, deciding each history once (one session for the whole walk)."""

    def __init__(self, n: int, k: int, strategy: str, seed: int, run: Run, samples: int = DEFAULT_SAMPLES):
        self.n, self.k, self.strategy, self.seed, self.samples = n, k, strategy, seed, samples
        self.session = _Session(run)
        self.codes = _all_codes(n, k)  # row i is code_at(i, n, k)
        self.decisions = 0

    def guess(self, history: History) -> Code:
        self.session.run.raise_if_stopped()
        decision = decide(self.n, self.k, history, self.strategy, self.seed, self.samples, self.session)
        if decision.guess is None:  # cannot happen: every node holds the secrets that reached it
            raise RuntimeError(f"no code fits the feedback so far: {history}")
        self.decisions += 1
        return decision.guess

    def children(self, node: Node) -> Iterator[Node | int]:
        """The node's children, and the index of the secret its guess wins on (if it is one of them)."""
        history, secrets = node
        if len(secrets) == 1:  # the one code that fits: guessed next (every strategy plays it)
            yield int(secrets[0])
            return
        guess = np.array([self.guess(history)], dtype=np.int8)
        classes = _classes_matrix(guess, self.codes[secrets], self.k)[0]  # black × (n + 1) + black + white
        order = np.argsort(classes, kind="stable")
        bounds = np.flatnonzero(np.diff(classes[order])) + 1
        for part in np.split(order, bounds):
            b, common = divmod(int(classes[part[0]]), self.n + 1)
            w = common - b
            if b == self.n:
                yield int(secrets[part[0]])
            else:
                yield history + ((tuple(int(c) for c in guess[0]), b, w),), secrets[part]

    def walk(self, node: Node, turns: np.ndarray, max_turns: int = 64) -> None:
        """Writes into `turns` (indexed by secret) the turn on which each secret of `node` is guessed."""
        stack = [node]
        while stack:
            current = stack.pop()
            depth = len(current[0]) + 1
            if depth > max_turns:
                raise RuntimeError(f"a game went past {max_turns} turns: {current[0]}")
            stack.extend(self.expand(current, turns))

    def expand(self, node: Node, turns: np.ndarray) -> list[Node]:
        """The node's children that still hold secrets; the secret its guess wins on gets its turn."""
        below: list[Node] = []
        for child in self.children(node):
            if isinstance(child, int):
                turns[child] = len(node[0]) + 1
            else:
                below.append(child)
        return below

    def root(self) -> Node:
        return (), np.arange(len(self.codes), dtype=np.int64)

    def subtrees(self, depth: int, turns: np.ndarray) -> list[Node]:
        """The nodes `depth` guesses down (secrets won sooner are written into `turns`)."""
        level = [self.root()]
        for _ in range(depth):
            level = [child for node in level for child in self.expand(node, turns)]
        return level


def every_secret(n: int, k: int, strategy: str = "best", seed: int = 0) -> np.ndarray:
    """The turns of every secret (in `all_codes` order) with `strategy`, in this process."""
    with Run() as run:
        walker = Walker(n, k, strategy, seed, run)
        turns = np.zeros(k**n, dtype=np.int8)
        walker.walk(walker.root(), turns)
    return turns
