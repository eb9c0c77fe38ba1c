"""Research and Planet X conference clues: the statements a game can make, and how a game draws them.

The game's own clue generator is hidden in its app; this is the model zolve first assumed, the `uniform`
clue model (`generators` has it and the `weighted` one, EluvK/planetx_server's, which draws the relation by
weight).

- **Research topics.** A game shows six topics A–F, each a pair (subject, other): the subject is an
  asteroid, comet, dwarf planet or gas cloud; the other is one of those or truly empty space, or the subject
  itself (a clue about how that object lies). A simulated game draws six distinct pairs uniformly among the
  pairs that have something to say on its mode and a true statement on its board.
- **A topic's statements** are the clue forms of the rules about its pair (`pair_statements`), less those
  the placement rules make true on every board or on none: they would tell nothing, or could never be
  shown. Researching a topic reveals one statement, drawn **uniformly among the topic's statements that are
  true on the hidden board**.
- **Conferences.** X1 (expert: X1 and X2) reveal statements with Planet X as subject
  (`conference_statements`), drawn the same way and redrawn (as the public generator does) until together
  they rule out Planet X sitting in any truly empty sector instead: the game makes sure Planet X can be told
  apart from empty space. (When no set of true statements can, any set is drawn.)
- **Conference timing.** The time track starts at space 1 and moves a space a day; a conference is read when
  a player reaches its space: 10 in standard, 7 and 16 in expert (where EluvK/planetx_server puts them;
  another fan tool says 12, and 10 and 22), so the spaces are a parameter of the simulation.

A player who knows how the game draws uses a clue twice. As a fact: the boards where it is false are ruled
out. And as evidence: a board on which the game had fewer statements to choose from was more likely to show
this one, so each board left is weighted by the chance the draw shows the clue there (`research_likelihood`:
one over the topic's true statements; `conference_likelihood`: one over the sets of true statements that
tell Planet X apart). A board on which the game would not have read the conference clues at all (they fail
to tell Planet X apart from its truly empty sectors while another set would) gets chance 0: it is ruled out
(`told_apart`). `hear_research` and `hear_conferences` do both; without weighing (a player who does not
trust the model), clues are plain facts. The worth of a research action before it is taken uses the same
draw model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, reduce
from itertools import combinations
from math import comb
from operator import or_
from typing import Any, cast
from weakref import WeakKeyDictionary

import numpy as np

from puzzles.planetx.board import BITS, DWARF_PLANET, EMPTY, GAS_CLOUD, PLANET_X, Mode
from puzzles.planetx.boardset import BoardSet
from puzzles.planetx.observations import Observation, SectorBits, parse, parse_clue

Statement = dict[str, Any]  # the JSON form of a `clue` observation

RESEARCH_SUBJECTS = ("asteroid", "comet", "dwarf_planet", "gas_cloud")
RESEARCH_OTHERS = (*RESEARCH_SUBJECTS, "empty")
TOPIC_LETTERS = "ABCDEF"
CONFERENCE_OTHERS = ("empty", "gas_cloud", "dwarf_planet", "asteroid", "comet")
#: the time-track space of each Planet X conference (X1, X2, ...)
CONFERENCE_SPACES = {"standard": (10,), "expert": (7, 16)}
WITHIN = (2, 3)
CONFERENCE_WITHIN = (2, 3, 4)


def _clue(relation: str, subject: str, **fields: Any) -> Statement:
    return {"type": "clue", "relation": relation, "subject": subject, **fields}


def pair_statements(mode: Mode, subject: str, other: str) -> list[Statement]:
    """Every statement of the rules' clue forms about a research pair, true or not."""
    near = [
        *(_clue("adjacent", subject, object=other, quantifier=q) for q in ("all", "some", "none")),
        *(_clue("opposite", subject, object=other, quantifier=q) for q in ("some", "none")),
    ]
    if subject != other:
        return near + [
            _clue("within", subject, object=other, quantifier=q, distance=d)
            for d in WITHIN
            for q in ("all", "none")
        ]
    bands = [_clue("band", subject, width=w, exact=True) for w in range(1, mode.sectors + 1)]
    bands += [_clue("band", subject, width=w, exact=False) for w in (mode.sectors // 3, mode.sectors // 2)]
    return near + bands


def conference_statements(mode: Mode) -> list[Statement]:
    """Every statement a Planet X conference can make, true or not (one Planet X: "all" is "some")."""
    out = []
    for other in CONFERENCE_OTHERS:
        out += [_clue("adjacent", "planet_x", object=other, quantifier=q) for q in ("some", "none")]
        out += [_clue("opposite", "planet_x", object=other, quantifier=q) for q in ("some", "none")]
        out += [
            _clue("within", "planet_x", object=other, quantifier=q, distance=d)
            for d in CONFERENCE_WITHIN
            for q in ("all", "none")
        ]
    return out


#: the most statements a weighted topic tabulates its draw's normaliser for, per truth word
WORD_TABLE_STATEMENTS = 16


@dataclass(frozen=True, eq=False)
class Topic:
    """A research pair (or the conference's Planet X) with the statements the game may draw for it and,
    per board of the mode (a `BoardSet` row), which of them hold: bit k of `truth[row]` for statement k."""

    subject: str
    other: str
    statements: tuple[Statement, ...]
    truth: np.ndarray  # per board, an unsigned word just wide enough for the statements (`truth_words`)
    informative: bool  # False: every statement left holds on every board (the topic tells nothing)
    #: how likely the game is to pick each statement when it holds, relative to the others that hold
    #: (None: all alike, a uniform draw among the true ones)
    weights: np.ndarray | None = None

    @cached_property
    def word_index(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct `truth` words, ascending, as int64 (at most 63 statements: they fit), and per board
        of the mode its word's index among them (a small key to count boards by, kept in the narrowest
        unsigned integer type that holds it)."""
        words, ids = np.unique(self.truth.astype(np.int64), return_inverse=True)
        return words, ids.astype(np.min_scalar_type(max(len(words) - 1, 0)))

    def true_on(self, rows: np.ndarray) -> np.ndarray:
        """rows × statements, as booleans."""
        bits = self.truth[rows][:, None] >> np.arange(len(self.statements), dtype=np.uint64)
        return cast(np.ndarray, (bits & np.uint64(1)).astype(bool))

    def true_statements(self, row: int) -> list[int]:
        word = int(self.truth[row])
        return [k for k in range(len(self.statements)) if word >> k & 1]

    def statement_weights(self) -> np.ndarray:
        return np.ones(len(self.statements)) if self.weights is None else self.weights

    def true_weight(self, truth: np.ndarray) -> np.ndarray:
        """Per truth word (this topic's `truth` of some boards): the total weight of the statements that
        hold, the normaliser of the game's draw (a uniform draw: how many hold)."""
        if self.weights is None:
            return cast(np.ndarray, np.bitwise_count(truth).astype(float))
        per_word = self._weight_per_word
        return self._summed(truth) if per_word is None else cast(np.ndarray, per_word[truth])

    @cached_property
    def _weight_per_word(self) -> np.ndarray | None:
        """`true_weight` of every word a topic of at most WORD_TABLE_STATEMENTS statements can have (the same
        sums, added in the same order), to look up; None for a larger topic."""
        if self.weights is None or len(self.statements) > WORD_TABLE_STATEMENTS:
            return None
        return self._summed(np.arange(1 << len(self.statements), dtype=np.uint64))

    def _summed(self, truth: np.ndarray) -> np.ndarray:
        total = np.zeros(len(truth))
        for k, weight in enumerate(self.statement_weights()):
            total += weight * ((truth >> np.uint64(k)) & np.uint64(1))
        return total

    def label(self) -> str:
        return self.subject if self.subject == self.other else f"{self.subject} & {self.other}"


#: per whole board set (kept as long as it is, as its topics are): which sectors hold each object, shared
#: by every topic found over it
_sector_bits: WeakKeyDictionary[BoardSet, SectorBits] = WeakKeyDictionary()


def statement_masks(everything: BoardSet, statements: Sequence[Statement]) -> list[np.ndarray]:
    """Where each clue statement holds on the whole set `everything`."""
    bits = _sector_bits.get(everything)
    if bits is None:
        bits = _sector_bits[everything] = SectorBits(everything.mode, everything.grid)
    return [parse_clue(everything.mode, statement).on_bits(bits) for statement in statements]


def _topic(everything: BoardSet, subject: str, other: str, candidates: list[Statement]) -> Topic:
    masks = statement_masks(everything, candidates)
    sums = [int(mask.sum()) for mask in masks]
    keep = [k for k, total in enumerate(sums) if 0 < total < len(everything)]
    informative = bool(keep)
    if not keep:  # nothing to say: the draw is among what always holds, and tells nothing
        keep = [k for k, total in enumerate(sums) if total == len(everything)]
    truth = truth_words([masks[k] for k in keep], len(everything))
    return Topic(subject, other, tuple(candidates[k] for k in keep), truth, informative)


def truth_words(masks: Sequence[np.ndarray], size: int) -> np.ndarray:
    """Per board (of `size`), bit k set where `masks[k]` holds, in the narrowest unsigned integer type
    that has a bit for each (a topic's truth over a whole expert set is kept for the life of a process)."""
    if len(masks) > 64:
        raise ValueError(f"a topic's statements must fit a 64-bit word, not {len(masks)}")
    kind = next(t for t in ("u1", "u2", "u4", "u8") if np.dtype(t).itemsize * 8 >= len(masks))
    truth: np.ndarray = np.zeros(size, dtype=kind)
    for bit, mask in enumerate(masks):
        truth |= np.left_shift(mask.astype(kind), bit)
    return truth


#: per whole board set (kept as long as it is): topics by (subject, other)
_topics: WeakKeyDictionary[BoardSet, dict[tuple[str, str], Topic]] = WeakKeyDictionary()


def research_topic(boards: BoardSet, subject: str, other: str) -> Topic:
    """A research pair's statements and their truth over every board of the set `boards` was cut from."""
    return _known_topic(boards, subject, other, pair_statements)


def conference_topic(boards: BoardSet) -> Topic:
    return _known_topic(boards, "planet_x", "*", lambda mode, *_: conference_statements(mode))


def _known_topic(
    boards: BoardSet, subject: str, other: str, statements: Callable[[Mode, str, str], list[Statement]]
) -> Topic:
    whole = boards.whole
    known = _topics.setdefault(whole, {})
    if (subject, other) not in known:
        known[subject, other] = _topic(whole, subject, other, statements(whole.mode, subject, other))
    return known[subject, other]


def conference_days(spaces: Sequence[int]) -> list[int]:
    """Days after which each conference is read (space s is reached after s - 1 days)."""
    return [space - 1 for space in spaces]


# -- how a game draws its clues -------------------------------------------------------------------
def draw_topics(rng: np.random.Generator, everything: BoardSet, row: int) -> dict[str, Topic]:
    """Six distinct research pairs with something to say on the board at `row`, lettered A–F."""
    pairs = [(s, o) for s in RESEARCH_SUBJECTS for o in RESEARCH_OTHERS]
    topics = [
        topic
        for s, o in pairs
        if (topic := research_topic(everything, s, o)).informative and topic.true_statements(row)
    ]
    picks = rng.choice(len(topics), size=len(TOPIC_LETTERS), replace=False)
    return {letter: topics[int(i)] for letter, i in zip(TOPIC_LETTERS, picks, strict=True)}


def draw_statement(rng: np.random.Generator, topic: Topic, row: int) -> Statement:
    """The clue a game shows for `topic` on the board at `row`: among the true statements, each as likely
    as its weight (uniform without weights)."""
    true = topic.true_statements(row)
    if topic.weights is None:
        return topic.statements[true[int(rng.integers(len(true)))]]
    chances = topic.weights[true]
    return topic.statements[true[int(rng.choice(len(true), p=chances / chances.sum()))]]


def draw_conferences(rng: np.random.Generator, everything: BoardSet, row: int, count: int) -> list[Statement]:
    """`count` conference clues of the board at `row`, in order (X1, X2): distinct true statements, uniform
    among the sets that together rule out Planet X in any truly empty sector (what redrawing until they
    do gives), or among all sets when none does."""
    mode = everything.mode
    topic = conference_topic(everything)
    true = [topic.statements[k] for k in topic.true_statements(row)]
    moves = _impostors(mode, everything.grid[row : row + 1])
    impostors = [moved[0].tolist() for _, _, moved in moves if len(moved)]
    # per statement, the impostors it rules out, as bits: a set tells Planet X apart when they cover all
    ruled_out = [
        sum(1 << i for i, board in enumerate(impostors) if not parse(mode, statement).holds(mode, board))
        for statement in true
    ]
    everyone = (1 << len(impostors)) - 1
    sets = list(combinations(range(len(true)), min(count, len(true))))
    telling = [chosen for chosen in sets if reduce(or_, (ruled_out[k] for k in chosen), 0) == everyone]
    pool = telling or sets
    chosen = list(pool[int(rng.integers(len(pool)))])
    rng.shuffle(chosen)
    return [true[k] for k in chosen]


# -- what the conferences' guarantee tells a player -----------------------------------------------------
def told_apart(boards: BoardSet, shown: Sequence[Statement]) -> np.ndarray:
    """Per board: could the game have shown these conference clues (all of the game's: X1, or X1 and X2)
    were it the hidden one? The game picks them to tell Planet X apart from every truly empty sector
    (`draw_conferences`), unless no set of as many true statements can. So a board stays when the shown
    clues rule out each of its impostors (Planet X moved into one of its truly empty sectors), or when no
    such set exists on it; the others are ruled out, a deduction from how the game draws, as sure as the
    clues themselves."""
    mode = boards.mode
    clues = [parse(mode, statement) for statement in shown]
    tells = np.ones(len(boards), dtype=bool)
    for _, rows, moved in _impostors(mode, boards.grid):
        fooled = np.logical_and.reduce([clue.mask(mode, moved) for clue in clues])
        tells[rows[fooled]] = False
    doubtful = np.flatnonzero(~tells)
    if len(doubtful):
        tells[doubtful] = ~_some_set_tells(boards.subset(doubtful), len(shown))
    return tells


def _impostors(mode: Mode, grid: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per sector j (0-based): the rows whose board stays valid with Planet X moved into sector j, and
    those moved boards. Moving Planet X only touches the rules about it and about truly empty sectors:
    no dwarf planet beside it, and every gas cloud beside a truly empty sector."""
    planet_x = np.argmax(grid == PLANET_X, axis=1)
    for j in range(mode.sectors):
        rows = np.flatnonzero(grid[:, j] == EMPTY)
        if not len(rows):
            continue
        moved = grid[rows].copy()
        moved[np.arange(len(rows)), planet_x[rows]] = EMPTY
        moved[:, j] = PLANET_X
        empty = moved == EMPTY
        beside_empty = np.roll(empty, 1, axis=1) | np.roll(empty, -1, axis=1)
        clouds_ok = ~((moved == GAS_CLOUD) & ~beside_empty).any(axis=1)
        no_dwarf = (moved[:, (j - 1) % mode.sectors] != DWARF_PLANET) & (
            moved[:, (j + 1) % mode.sectors] != DWARF_PLANET
        )
        valid = clouds_ok & no_dwarf
        yield j, rows[valid], moved[valid]


def impostor_rows(boards: BoardSet, rows: np.ndarray, sector: int) -> tuple[np.ndarray, np.ndarray]:
    """For the boards at `rows`, with Planet X moved into `sector` (0-based, truly empty on each): the
    rows of the whole set holding those impostors, and whether it holds each (a partial whole set may
    not)."""
    whole = boards.whole
    planet_x = np.argmax(boards.grid[rows] == PLANET_X, axis=1).astype(np.int64)
    codes = boards.codes[rows] - (np.int64(1) << BITS * planet_x) + (np.int64(1) << BITS * sector)
    at = np.minimum(np.searchsorted(whole.codes, codes), len(whole.codes) - 1)
    return at, whole.codes[at] == codes


def _some_set_tells(boards: BoardSet, count: int) -> np.ndarray:
    """Per board: do some `count` conference statements true on it rule out each of its impostors?"""
    return telling_sets(*coverage(boards, conference_topic(boards)), count) > 0


def coverage(
    boards: BoardSet, topic: Topic, heard: Sequence[Observation] = ()
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per board: which of `topic`'s statements (the conference's) are true on it (statements × boards),
    which impostors the clues `heard` leave standing (bit j: Planet X moved into sector j), and per
    statement the standing impostors it rules out (statements × boards, as bits). An impostor is itself a
    board of the mode, so what holds on it is looked up in the whole set's truth table when the whole set
    holds it."""
    mode = boards.mode
    true = np.ascontiguousarray(topic.true_on(boards.rows).T)
    needed = np.zeros(len(boards), dtype=np.int32)
    ruled_out = np.zeros(true.shape, dtype=np.int32)
    for j, rows, moved in _impostors(mode, boards.grid):
        if heard:
            standing = np.logical_and.reduce([clue.mask(mode, moved) for clue in heard])
            rows, moved = rows[standing], moved[standing]
        bit = np.int32(1 << j)
        needed[rows] |= bit
        at, held = impostor_rows(boards, rows, j)
        if held.all():
            false = ~topic.true_on(at).T
        else:  # a partial whole set: evaluate the statements on the impostors
            false = np.array([~parse(mode, s).mask(mode, moved) for s in topic.statements])
        ruled_out[:, rows] |= np.where(false, bit, np.int32(0))
    ruled_out[~true] = 0
    return true, needed, ruled_out


def telling_sets(
    true: np.ndarray, needed: np.ndarray, ruled_out: np.ndarray, count: int, given: Sequence[int] = ()
) -> np.ndarray:
    """Per board: how many sets of `count` conference statements true on it, the statements `given`
    among them, rule out all its impostors (the arguments as `coverage` gives them)."""
    found = np.zeros(len(needed), dtype=np.int64)
    useful = [k for k in range(len(true)) if true[k].any() and k not in given]
    size = min(count, len(useful) + len(given))
    if not size:  # no board, or none with a true statement
        return found
    for chosen in combinations(useful, size - len(given)):
        members = [*given, *chosen]
        covered = reduce(or_, (ruled_out[k] for k in members))
        valid = np.logical_and.reduce([true[k] for k in members])
        found += valid & ((covered & needed) == needed)
    return found


# -- how likely each board makes what was shown --------------------------------------------------------
def research_likelihood(boards: BoardSet, topic: Topic, statement: Statement) -> np.ndarray | None:
    """Per board: the chance the game shows `statement` for `topic` were the board the hidden one
    (among the topic's statements true on it, by their weights). None when the model never shows that
    statement: then it can only be used as a plain fact."""
    k = statement_position(boards.mode, topic.statements, statement)
    if k is None:
        return None
    truth = topic.truth[boards.rows]
    holds = (truth >> np.uint64(k)) & np.uint64(1)
    return cast(
        np.ndarray, holds * topic.statement_weights()[k] / np.maximum(topic.true_weight(truth), 1e-300)
    )


def conference_likelihood(
    boards: BoardSet, shown: Sequence[Statement], count: int | None = None
) -> np.ndarray | None:
    """Per board: the chance that the `count` conference clues the game reads (all of `shown` when None)
    include those `shown` were the board the hidden one: `draw_conferences` picks uniformly among the
    sets of true statements that tell Planet X apart, or among all sets of true statements when none does.
    Once all are shown, 0 exactly where `told_apart` rules the board out (or a clue is false). None when
    the model never reads one of them."""
    topic = conference_topic(boards)
    picked = [statement_position(boards.mode, topic.statements, statement) for statement in shown]
    if None in picked or len(set(picked)) < len(picked):
        return None
    given = cast(list[int], picked)
    count = len(given) if count is None else count
    true, needed, ruled_out = coverage(boards, topic)
    shown_true = np.logical_and.reduce([true[k] for k in given])
    telling = telling_sets(true, needed, ruled_out, count)
    with_shown = telling_sets(true, needed, ruled_out, count, given)
    true_count = true.sum(axis=0)
    every_set = np.array([comb(n, count) for n in range(len(true) + 1)], dtype=float)[true_count]
    containing = np.array([comb(n, count - len(given)) for n in range(len(true) + 1)], dtype=float)
    shown_among = containing[np.maximum(true_count - len(given), 0)]
    anyhow = shown_among / np.maximum(every_set, 1)  # no set tells: any set of true statements
    chance = np.where(telling > 0, with_shown / np.maximum(telling, 1), anyhow)
    return np.where(shown_true, chance, 0.0)


def statement_position(mode: Mode, statements: Sequence[Statement], statement: Statement) -> int | None:
    """Where `statement` (as recorded: any equivalent form) is among `statements`, if it is."""
    wanted = parse(mode, statement)
    return next((k for k, s in enumerate(statements) if parse(mode, s) == wanted), None)


def hear_research(boards: BoardSet, topic: Topic, statement: Statement, weigh: bool = True) -> BoardSet:
    """The boards left once research of `topic` showed `statement`: those where it holds, and (`weigh`)
    each weighted by how likely the game was to show it there."""
    chance = research_likelihood(boards, topic, statement) if weigh else None
    if chance is None:
        return boards.subset(parse(boards.mode, statement).mask(boards.mode, boards.grid))
    return boards.weighted(chance)


def hear_conferences(boards: BoardSet, shown: Sequence[Statement], weigh: bool = True) -> BoardSet:
    """The boards left once every conference clue of the game is in (`shown`, already applied as facts):
    those `told_apart` keeps, and (`weigh`) each weighted by how likely the game was to read them there."""
    chance = conference_likelihood(boards, shown) if weigh else None
    if chance is None:
        return boards.subset(told_apart(boards, shown))
    return boards.weighted(chance)
