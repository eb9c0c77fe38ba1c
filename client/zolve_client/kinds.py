"""Each kind's params and result as TypedDicts (named after their components of the OpenAPI document, which
tests/test_client_models.py holds them to), and KINDS: the one place that maps a kind's name to them.

    from zolve_client import Client
    from zolve_client.kinds import DICE, DiceParams

    with Client() as client:
        job = client.submit(DICE, DiceParams(dice=3, faces=6))  # Job[DiceParams, DiceResult]
        wins = client.result(job).get("wins")                     # DiceResult's: int | None

(A type checker infers a kind's params from the Kind and the params together: give it the params' type,
DiceParams(...) or a variable annotated `params: DiceParams`; an inline dict leaves it unsure.)

Nested objects (a plan's stages, a game's turns, ...) are plain dicts."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar

P = TypeVar("P")
#: covariant: a kind whose result is a DiceResult is one whose result is a DiceResult or None
R_co = TypeVar("R_co", covariant=True)


@dataclass(frozen=True)
class Kind(Generic[P, R_co]):
    """A kind of job: its name on the wire and the types of its params and result. Passed to
    Client.submit in place of the name, it types the job (and its result) that comes back."""

    name: str
    params: type[P]
    result: type[R_co]

    def __str__(self) -> str:
        return self.name


class DiceParams(TypedDict):
    """dice: what a job of it is asked."""

    #: number of dice
    dice: int
    #: faces per die
    faces: int
    #: "cycle" (each die beats the next, the last the first) or [[winner, loser], ...]
    beats: NotRequired[Literal["cycle"] | list[list[int]]]
    #: largest face value (default dice × faces)
    max_face: NotRequired[int | None]


class DiceResult(TypedDict):
    """dice: what a job of it answers."""

    #: sat, or unsat when no dice fit
    status: str
    dice: NotRequired[list[list[int]] | None]
    #: true once no larger win count is satisfiable
    optimal: NotRequired[bool]
    #: faces²
    out_of: NotRequired[int]
    #: rolls each winner wins
    wins: NotRequired[int | None]


class PlanParams(TypedDict):
    """leaving_earth.plan: what a job of it is asked."""

    destination: str
    origin: str
    #: each maneuver with an aerobraking profile may use it
    aerobraking: NotRequired[bool]
    #: how many of each of juno, atlas, soyuz, proton, saturn, ion (default 0-8 each)
    components: NotRequired[dict[str, Any]]
    #: total cost: a number as 4 (exactly 4), -4 (at most 4), 4+ (at least 4) or 2-4 (between 2 and 4)
    cost: NotRequired[str | int | None]
    #: bounded: relaxation-pruned search; optimize: Z3 Optimize on every route
    engine: NotRequired[Literal["bounded", "optimize"]]
    #: multi-year maneuvers may be flown in half the years at double difficulty
    faster: NotRequired[bool]
    free_ions: NotRequired[int]
    #: Earth to orbit: any, two-stage (via suborbital flight; les' default) or single
    launch: NotRequired[Literal["any", "two-stage", "single-stage"]]
    #: objectives in priority order; one name means les' order for it
    minimize: NotRequired[list[Literal["cost", "time", "mass"]]]
    payload: NotRequired[int]
    #: ion thrusters may be detached once no longer needed
    rendezvous: NotRequired[bool]
    #: total years: a number as 4 (exactly 4), -4 (at most 4), 4+ (at least 4) or 2-4 (between 2 and 4)
    time: NotRequired[str | int | None]
    #: stops in order between origin and destination (return trips: E, L, E)
    waypoints: NotRequired[list[dict[str, Any]]]
    #: the year the journey starts (needed for slingshot maneuvers)
    year: NotRequired[int | None]


class PlanResult(TypedDict):
    """leaving_earth.plan: what a job of it answers."""

    components: NotRequired[dict[str, Any]]
    cost: NotRequired[int]
    end: NotRequired[int]
    #: rockets and ion thrusters (payload not included)
    mass: NotRequired[int]
    message: NotRequired[str]
    objectives: NotRequired[list[str]]
    payload: NotRequired[int]
    plan: NotRequired[list[dict[str, Any]]]
    route: NotRequired[list[str]]
    search: NotRequired[dict[str, Any]]
    start: NotRequired[int]
    #: optimal, infeasible or invalid
    status: NotRequired[str]
    time: NotRequired[int]


class GuessParams(TypedDict):
    """mastermind.guess: what a job of it is asked."""

    #: colours
    k: int
    #: code length
    n: int
    #: the guesses so far and their feedback
    history: NotRequired[list[dict[str, Any]]]
    #: best, k**n > 100000: how many codes that fit are sampled and tried
    samples: NotRequired[int]
    #: seeds the sampling: the same params always give the same guesses
    seed: NotRequired[int]
    strategy: NotRequired[Literal["consistent", "minimax", "best", "optimal"]]


class GuessResult(TypedDict):
    """mastermind.guess: what a job of it answers."""

    #: the guess fits every feedback (could be the secret)
    consistent: NotRequired[bool]
    error: NotRequired[dict[str, Any] | None]
    guess: NotRequired[list[int] | None]
    #: why the strategy differs from the one asked
    note: NotRequired[str | None]
    #: how many codes fit the history, when that is known exactly
    remaining: NotRequired[int | None]
    #: a lower bound on that count (equal to remaining when known)
    remaining_at_least: NotRequired[int]
    seconds: NotRequired[float]
    #: ok; solved (the history holds the secret); contradiction (no code fits)
    status: NotRequired[str]
    #: the strategy that played
    strategy: NotRequired[str]


class PlayParams(TypedDict):
    """mastermind.play: what a job of it is asked."""

    #: colours
    k: int
    #: code length
    n: int
    secrets: Literal["all"] | list[list[int]] | dict[str, Any]
    #: a game still unsolved after this many guesses stops (default max(4n + 10, 2k))
    max_turns: NotRequired[int | None]
    #: best, k**n > 100000: how many codes that fit are sampled and tried
    samples: NotRequired[int]
    #: seeds the sampling: the same params always give the same guesses
    seed: NotRequired[int]
    strategy: NotRequired[Literal["consistent", "minimax", "best", "optimal"]]


class PlayResult(TypedDict):
    """mastermind.play: what a job of it answers."""

    #: mean turns over all games (an unsolved game counts its turns)
    avg_turns: NotRequired[float | None]
    games: NotRequired[list[dict[str, Any]] | None]
    games_count: NotRequired[int]
    #: the most turns any game took
    max_turns: NotRequired[int | None]
    note: NotRequired[str | None]
    #: `games` was too large to return whole: page it at GET /jobs/{id}/result/items
    paged: NotRequired[dict[str, Any] | None]
    #: total play time over all games
    seconds: NotRequired[float]
    seconds_per_game: NotRequired[float | None]
    strategy: NotRequired[str]
    #: turns → solved games
    turn_histogram: NotRequired[dict[str, Any]]
    #: games stopped at max_turns
    unsolved: NotRequired[int]


class DeduceParams(TypedDict):
    """planetx.deduce: what a job of it is asked."""

    mode: Literal["standard", "expert"]
    difficulty: NotRequired[Literal["youth", "beginner", "experienced", "genius"]]
    #: the last action was research: none is offered (never twice in a row)
    last_action_research: NotRequired[bool]
    #: what is known so far
    observations: NotRequired[list[dict[str, Any]]]
    rank_by: NotRequired[Literal["bits_per_day", "goal_bits_per_day"]]
    #: topics already researched (so are those of clues recorded with a topic)
    researched: NotRequired[list[Literal["A", "B", "C", "D", "E", "F"]]]
    #: first sector of the visible sky (the sky moves one sector a day)
    sky_start: NotRequired[int]
    starting_facts: NotRequired[list[dict[str, Any]]]
    #: targets spent (2 allowed)
    targets_used: NotRequired[int]
    #: how many actions to rank
    top: NotRequired[int]
    topics: NotRequired[dict[str, Any]]
    #: also count the remaining boards with Z3 (up to 20,000)
    verify_with_z3: NotRequired[bool]
    weigh_clues: NotRequired[bool]


class DeduceResult(TypedDict):
    """planetx.deduce: what a job of it answers."""

    actions: NotRequired[list[dict[str, Any]]]
    #: boards consistent with the observations
    boards: NotRequired[int]
    determined: NotRequired[dict[str, Any]]
    locate: NotRequired[dict[str, Any]]
    message: NotRequired[str]
    mode: NotRequired[str]
    planet_x: NotRequired[list[dict[str, Any]]]
    seconds: NotRequired[float]
    sectors: NotRequired[list[dict[str, Any]]]
    #: stored (a stored enumeration) or enumerated
    source: NotRequired[str]
    #: starting facts taken into account
    starting_facts: NotRequired[int]
    #: ok, or contradiction when no board fits
    status: NotRequired[str]
    total_boards: NotRequired[int]
    #: Z3's count, with verify_with_z3
    z3_count: NotRequired[int | None]


class EnumerateParams(TypedDict):
    """planetx.enumerate: what a job of it is asked."""

    mode: Literal["standard", "expert"]
    #: extra facts every board must satisfy
    constraints: NotRequired[list[dict[str, Any]]]
    #: a shard finding more boards splits by one more sector (default 50000)
    max_shard_boards: NotRequired[int | None]
    #: shard by the objects of this many first sectors (default: 2 standard, 4 expert)
    shard_depth: NotRequired[int | None]


class EnumerateResult(TypedDict):
    """planetx.enumerate: what a job of it answers."""

    constraints: NotRequired[list[dict[str, Any]]]
    #: how many boards
    count: NotRequired[int]
    mode: NotRequired[str]
    #: per sector, boards by object
    sectors: NotRequired[list[dict[str, Any]]]


class SimulateParams(TypedDict):
    """planetx.simulate: what a job of it is asked."""

    mode: Literal["standard", "expert"]
    clue_model: NotRequired[Literal["uniform", "weighted"]]
    clue_model_known: NotRequired[bool]
    #: time-track spaces of the conferences (default: 10 standard; 7 and 16 expert)
    conference_spaces: NotRequired[list[int] | None]
    #: Planet X conference clues at their time (false: a game without them)
    conferences: NotRequired[bool]
    difficulty: NotRequired[Literal["youth", "beginner", "experienced", "genius"]]
    games: NotRequired[int]
    games_per_shard: NotRequired[int | None]
    max_days: NotRequired[int]
    policy: NotRequired[Literal["survey-only", "entropy", "goal", "research"]]
    #: games shown in full
    sample_games: NotRequired[int]
    seed: NotRequired[int]
    weigh_clues: NotRequired[bool]


class SimulateResult(TypedDict):
    """planetx.simulate: what a job of it answers."""

    #: actions per game by type
    action_mix: NotRequired[dict[str, Any]]
    avg_days: NotRequired[float | None]
    #: half the mean's 95% interval
    avg_days_ci95: NotRequired[float | None]
    clue_model: NotRequired[str]
    clue_model_known: NotRequired[bool]
    #: empty: no conferences
    conference_spaces: NotRequired[list[int]]
    days_histogram: NotRequired[dict[str, Any]]
    difficulty: NotRequired[str]
    games: NotRequired[int]
    max_days: NotRequired[int | None]
    median_days: NotRequired[float | None]
    min_days: NotRequired[int | None]
    mode: NotRequired[str]
    #: games that ended with the player finding the dealing clue_model likelier
    model_identified: NotRequired[int]
    policy: NotRequired[str]
    sample: NotRequired[list[dict[str, Any]]]
    seconds_per_game: NotRequired[float | None]
    seed: NotRequired[int]
    #: games whose player's clue model ruled out every board (it then kept facts)
    started_over: NotRequired[int]
    #: games that hit max_days
    unfinished: NotRequired[int]
    weigh_clues: NotRequired[bool]
    wrong_locates: NotRequired[int]


class TaijiEnumerateParams(TypedDict):
    """taiji.enumerate: what a job of it is asked."""

    #: a Taiji Maker puzzle code, e.g. '3:Kw202200Fw62Dw4' (give code or grid)
    code: NotRequired[str | None]
    grid: NotRequired[list[list[dict[str, Any] | None]] | None]
    max_solutions: NotRequired[int]


class TaijiEnumerateResult(TypedDict):
    """taiji.enumerate: what a job of it answers."""

    #: solutions found (stored as rows: GET /jobs/{id}/solutions)
    count: int
    #: count, when there may be more (null when complete)
    at_least: NotRequired[int | None]
    #: every solution was found: count is exact (else: at least count)
    complete: NotRequired[bool]
    #: complete; cap (max_solutions reached, and more exist); time limit
    ended: NotRequired[str]
    #: the first solution found: rows of 1 (lit) / 0 (unlit), null for holes
    first_solution: NotRequired[list[list[int | None]] | None]
    height: NotRequired[int]
    seconds: NotRequired[float]
    #: e.g. 'exactly 3 solutions', 'at least 1000 solutions'
    summary: NotRequired[str]
    #: [row, column] of each tile the solutions found disagree on
    undecided: NotRequired[list[list[int]]]
    #: exactly one solution; null when none was found in time
    unique: NotRequired[bool | None]
    #: no tile is fixed, so a solution and its full flip count as one
    up_to_flip: NotRequired[bool]
    #: an independent rule checker (no Z3) accepts every solution found
    valid: NotRequired[bool]
    width: NotRequired[int]


class TaijiParams(TypedDict):
    """taiji.solve: what a job of it is asked."""

    #: a Taiji Maker puzzle code, e.g. '3:Kw202200Fw62Dw4' (give code or grid)
    code: NotRequired[str | None]
    grid: NotRequired[list[list[dict[str, Any] | None]] | None]
    #: also search for a second solution (up to flipping every tile, when no tile is fixed)
    unique: NotRequired[bool]


class TaijiResult(TypedDict):
    """taiji.solve: what a job of it answers."""

    #: solved, or unsat when no lighting works
    status: str
    height: NotRequired[int]
    #: text rows: # lit, . unlit, space = hole
    rendering: NotRequired[list[str] | None]
    #: another solution, when `unique` is false
    second_solution: NotRequired[list[list[int | None]] | None]
    #: solve time, uniqueness check included
    seconds: NotRequired[float]
    #: rows of 1 (lit) / 0 (unlit), null for holes
    solution: NotRequired[list[list[int | None]] | None]
    unique: NotRequired[bool | None]
    up_to_flip: NotRequired[bool]
    #: an independent rule checker (no Z3) accepts the solution(s); null when unsat
    valid: NotRequired[bool | None]
    width: NotRequired[int]


DICE = Kind("dice", DiceParams, DiceResult)
LEAVING_EARTH_PLAN = Kind("leaving_earth.plan", PlanParams, PlanResult)
MASTERMIND_GUESS = Kind("mastermind.guess", GuessParams, GuessResult)
MASTERMIND_PLAY = Kind("mastermind.play", PlayParams, PlayResult)
PLANETX_DEDUCE = Kind("planetx.deduce", DeduceParams, DeduceResult)
PLANETX_ENUMERATE = Kind("planetx.enumerate", EnumerateParams, EnumerateResult)
PLANETX_SIMULATE = Kind("planetx.simulate", SimulateParams, SimulateResult)
TAIJI_ENUMERATE = Kind("taiji.enumerate", TaijiEnumerateParams, TaijiEnumerateResult)
TAIJI_SOLVE = Kind("taiji.solve", TaijiParams, TaijiResult)

#: every kind the service ships, by name
KINDS: Mapping[str, Kind[Any, Any]] = {
    kind.name: kind
    for kind in (
        *(DICE, LEAVING_EARTH_PLAN, MASTERMIND_GUESS, MASTERMIND_PLAY),
        *(PLANETX_DEDUCE, PLANETX_ENUMERATE, PLANETX_SIMULATE, TAIJI_ENUMERATE, TAIJI_SOLVE),
    )
}
