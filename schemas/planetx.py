"""Params and results of the Planet X kinds."""

from __future__ import annotations

from typing import Any, ClassVar

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from schemas.fields import Integer, QueryInteger
from schemas.rows import RowPageQuery
from schemas.rules import CrossFieldRule

OBJECT_NAMES = ("empty", "planet_x", "gas_cloud", "dwarf_planet", "asteroid", "comet")
MODES = ("standard", "expert")
MAX_SECTORS = 18
#: a standard board's sectors (an expert board has MAX_SECTORS)
STANDARD_SECTORS = 12
SECTORS_RULE = f"1 to {STANDARD_SECTORS} standard, 1 to {MAX_SECTORS} expert"
#: a sector number's range in any mode; past it, the message says both modes' (`_check_sectors` then
#: checks the request's own)
SECTOR = validate.Range(1, MAX_SECTORS, error=f"a sector is {SECTORS_RULE}")
MAX_FACTS = 200
#: how many starting facts the app deals at each difficulty (puzzles.planetx.starting, which the web
#: layer does not import: it would load the solver)
DIFFICULTIES = {"youth": 12, "beginner": 8, "experienced": 4, "genius": 0}
STARTING_FACT_OBJECTS = ("asteroid", "comet", "dwarf_planet", "gas_cloud")
CLUE_MODELS = ("uniform", "weighted")


class StartingFact(Schema):
    """A fact the game dealt at the start: `{"sector": 4, "object": "comet"}` reads "sector 4 is not a
    comet"."""

    sector = Integer(
        required=True,
        validate=SECTOR,
        metadata={"description": "1 to 12 in standard mode, 1 to 18 in expert mode"},
    )
    object = fields.String(
        required=True,
        validate=validate.OneOf(STARTING_FACT_OBJECTS),
        metadata={"description": "what the sector does not hold: asteroid, comet, dwarf_planet or gas_cloud"},
    )


def _difficulty(description: str) -> fields.String:
    return fields.String(
        validate=validate.OneOf(tuple(DIFFICULTIES)),
        metadata={
            "description": f"{description}: youth (12 starting facts), beginner (8), experienced (4) or "
            "genius (none)"
        },
    )


class SectorFact(Schema):
    """A plain fact about one sector: `{"sector": 3, "object": "comet", "present": false}` reads
    "sector 3 is not a comet". (Planet X counts as itself here, not as empty.)"""

    sector = Integer(
        required=True,
        validate=SECTOR,
        metadata={"description": "1 to 12 in standard mode, 1 to 18 in expert mode"},
    )
    object = fields.String(required=True, validate=validate.OneOf(OBJECT_NAMES))
    present = fields.Boolean(load_default=True)


class EnumerateParams(Schema):
    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule("constraints", f"a fact's `sector` exists in `mode`: {SECTORS_RULE}"),
    )

    mode = fields.String(required=True, validate=validate.OneOf(MODES))
    constraints = fields.List(
        fields.Nested(SectorFact),
        load_default=list,
        validate=validate.Length(max=MAX_FACTS),
        metadata={"description": "extra facts every board must satisfy"},
    )
    shard_depth = Integer(
        load_default=None,
        validate=validate.Range(1, 8),
        metadata={
            "description": "shard by the objects of this many first sectors (default: 2 standard, 4 expert)"
        },
    )
    max_shard_boards = Integer(
        load_default=None,
        validate=validate.Range(100, 1_000_000),
        metadata={"description": "a shard finding more boards splits by one more sector (default 50000)"},
    )

    @validates_schema
    def _sectors_exist(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("mode") not in MODES:
            return
        errors = {
            index: bad
            for index, fact in enumerate(data.get("constraints") or [])
            if (bad := _check_sectors(fact, data["mode"], ("sector",)))
        }
        if errors:
            raise ValidationError({"constraints": errors})


class SectorCounts(Schema):
    sector = fields.Integer()
    counts = fields.Dict(keys=fields.String(), values=fields.Integer())
    planet_x_probability = fields.Float()


class EnumerateResult(Schema):
    mode = fields.String()
    count = fields.Integer(metadata={"description": "how many boards"})
    constraints = fields.List(fields.Dict())
    sectors = fields.List(
        fields.Nested(SectorCounts), metadata={"description": "per sector, boards by object"}
    )


class BoardFilters(Schema):
    """The board filters of pages and exports: one parameter per object, its values sectors."""

    e = fields.List(QueryInteger(validate=SECTOR))
    x = fields.List(QueryInteger(validate=SECTOR))
    g = fields.List(QueryInteger(validate=SECTOR))
    d = fields.List(QueryInteger(validate=SECTOR))
    a = fields.List(QueryInteger(validate=SECTOR))
    c = fields.List(QueryInteger(validate=SECTOR))


class BoardQuery(BoardFilters, RowPageQuery):
    """Keyset pages of a job's boards; `?x=7` keeps boards with Planet X in sector 7 (repeatable, and
    likewise e, g, d, a, c for empty, gas cloud, dwarf planet, asteroid, comet)."""


class BoardExportQuery(BoardFilters):
    """Every board of a job; `?x=7` keeps boards with Planet X in sector 7 (repeatable, and likewise e,
    g, d, a, c for empty, gas cloud, dwarf planet, asteroid, comet)."""


class BoardRow(Schema):
    code = fields.Integer(metadata={"description": "3 bits per sector, sector 1 lowest (E0 X1 G2 D3 A4 C5)"})
    board = fields.String(metadata={"description": "one letter per sector, sector 1 first"})


class BoardPage(Schema):
    items = fields.List(fields.Nested(BoardRow))
    next_cursor = fields.Integer(allow_none=True)


# -- deduction ----------------------------------------------------------------------------------
OBSERVATION_TYPES = ("sector", "survey", "target", "clue", "locate")
SURVEY_OBJECTS = ("asteroid", "comet", "dwarf_planet", "gas_cloud", "empty")
SEEN_OBJECTS = ("empty", "gas_cloud", "dwarf_planet", "asteroid", "comet")
RELATIONS = ("adjacent", "opposite", "within", "band")
QUANTIFIERS = {"adjacent": ("all", "some", "none"), "opposite": ("some", "none"), "within": ("all", "none")}
REQUIRED = {
    "sector": ("sector", "object"),
    "survey": ("object", "first", "last", "count"),
    "target": ("sector", "seen"),
    "clue": ("relation", "subject"),
    "locate": ("sector", "left", "right"),
}
SECTOR_FIELDS = ("sector", "first", "last")
TOPIC_LETTERS = ("A", "B", "C", "D", "E", "F")
CLUE_SOURCES = (*TOPIC_LETTERS, "X1", "X2")
RESEARCH_SUBJECTS = ("asteroid", "comet", "dwarf_planet", "gas_cloud")
RESEARCH_OTHERS = (*RESEARCH_SUBJECTS, "empty")
MAX_OBSERVATIONS = 200
OBSERVATION_EXAMPLES = [
    {"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2},
    {"type": "target", "sector": 4, "seen": "empty"},
    {"type": "sector", "sector": 3, "object": "comet", "present": False},
    {
        "type": "clue",
        "relation": "adjacent",
        "quantifier": "none",
        "subject": "gas_cloud",
        "object": "comet",
        "topic": "B",
    },
    {
        "type": "clue",
        "relation": "within",
        "quantifier": "all",
        "distance": 3,
        "subject": "planet_x",
        "object": "asteroid",
    },
    {"type": "clue", "relation": "band", "subject": "dwarf_planet", "width": 4, "exact": False},
    {"type": "locate", "sector": 5, "left": "asteroid", "right": "empty"},
]


def _choice(values: tuple[str, ...], description: str) -> fields.String:
    return fields.String(validate=validate.OneOf(values), metadata={"description": description})


#: what an observation's `type` says of its fields (its description in the API document)
OBSERVATION_TYPES_SAY = """One thing a player learned. `type` says which fields apply:
- `survey`: `count` sectors from `first` to `last` (inclusive, clockwise, may wrap) hold `object`
  (asteroid, comet, dwarf_planet, gas_cloud, or empty — which counts Planet X too);
- `target`: targeting `sector` showed `seen` (Planet X shows as empty);
- `sector`: `sector` holds `object` (or not, with `present: false`); Planet X is itself here;
- `clue` (research or conference): `relation` adjacent (`quantifier` all/some/none), opposite
  (some/none) or within `distance` sectors (all/none) relates each `subject` to `object`; or `relation`
  band: every `subject` lies within `width` consecutive sectors (`exact`: and no fewer);
- `locate`: a failed locate: Planet X is not in `sector` with `left` and `right` beside it."""


class Observation(Schema):
    """One thing a player learned: OBSERVATION_TYPES_SAY."""

    type = fields.String(required=True, validate=validate.OneOf(OBSERVATION_TYPES))
    sector = Integer(validate=SECTOR)
    first = Integer(validate=SECTOR)
    last = Integer(validate=SECTOR)
    count = Integer(validate=validate.Range(0, MAX_SECTORS))
    object = _choice(OBJECT_NAMES, "the object counted, placed, or related to")
    present = fields.Boolean(metadata={"description": "sector facts: false means 'is not' (default true)"})
    seen = _choice(SEEN_OBJECTS, "what a target showed")
    relation = _choice(RELATIONS, "clue relation")
    quantifier = _choice(("all", "some", "none"), "clue quantifier over the subjects")
    subject = _choice(OBJECT_NAMES, "the clue's subject object")
    distance = Integer(validate=validate.Range(1, MAX_SECTORS // 2))
    width = Integer(validate=validate.Range(1, MAX_SECTORS))
    exact = fields.Boolean(metadata={"description": "band clues: exactly `width` wide (default: at most)"})
    topic = _choice(
        CLUE_SOURCES,
        "clues: where it came from, research topic A-F or conference X1/X2 (a researched topic is not "
        "offered again; once every conference of the mode is recorded, X1 or X1 and X2, the boards on which "
        "the game would not have read them are ruled out too: it picks them to tell Planet X apart from "
        "every truly empty sector)",
    )
    left = _choice(OBJECT_NAMES, "a failed locate's left neighbour")
    right = _choice(OBJECT_NAMES, "a failed locate's right neighbour")

    class Meta:
        metadata = {"examples": OBSERVATION_EXAMPLES}
        description = OBSERVATION_TYPES_SAY

    @validates_schema
    def _fields_for_type(self, data: dict[str, Any], **kwargs: Any) -> None:
        kind = data.get("type", "")
        needed = list(REQUIRED.get(kind, ()))
        if kind == "clue" and data.get("relation") in QUANTIFIERS:
            needed += ["object", "quantifier"] + (["distance"] if data["relation"] == "within" else [])
        if kind == "clue" and data.get("relation") == "band":
            needed.append("width")
        missing = {name: [f"required for a {kind} observation"] for name in needed if name not in data}
        if missing:
            raise ValidationError(missing)
        if kind == "survey" and data["object"] not in SURVEY_OBJECTS:
            raise ValidationError(f"surveys count one of {', '.join(SURVEY_OBJECTS)}", "object")
        allowed = QUANTIFIERS.get(data.get("relation", ""), ())
        if kind == "clue" and allowed and data["quantifier"] not in allowed:
            raise ValidationError(f"a {data['relation']} clue takes {' / '.join(allowed)}", "quantifier")


def _check_sectors(data: dict[str, Any], mode: str, fields_: tuple[str, ...]) -> dict[str, list[str]]:
    sectors = STANDARD_SECTORS if mode == "standard" else MAX_SECTORS
    return {
        name: [f"{mode} mode has sectors 1 to {sectors}"]
        for name in fields_
        if data.get(name) is not None and data[name] > sectors
    }


def _research_pair(pair: list[str]) -> None:
    if len(pair) != 2:
        return  # told by the length check
    if pair[0] not in RESEARCH_SUBJECTS:
        raise ValidationError(f"a topic's subject is one of {', '.join(RESEARCH_SUBJECTS)}")
    if pair[1] not in RESEARCH_OTHERS:
        raise ValidationError(f"a topic's other object is one of {', '.join(RESEARCH_OTHERS)}")


def _weigh_clues() -> fields.Boolean:
    return fields.Boolean(
        load_default=True,
        metadata={
            "description": "weigh each board by how likely the game was to show the research and conference "
            "clues heard on it (research: uniform among its topic's true statements; conferences: among the "
            "sets that tell Planet X apart); false: clues are plain facts, every board left equally likely"
        },
    )


class DeduceParams(Schema):
    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule(
            "observations",
            f"each observation's sectors (`sector`, `first`, `last`) exist in `mode` ({SECTORS_RULE}); its "
            "`type` says which fields it needs (see Observation); a survey counts one of "
            f"{', '.join(SURVEY_OBJECTS)}; a clue's `quantifier` fits its `relation`",
        ),
        CrossFieldRule("starting_facts", f"each fact's `sector` exists in `mode` ({SECTORS_RULE})"),
        CrossFieldRule(
            "starting_facts", "no more facts than `difficulty` deals (when the difficulty is given)"
        ),
        CrossFieldRule("sky_start", f"a sector of `mode` ({SECTORS_RULE})"),
        CrossFieldRule(
            "topics",
            f"keys are topic letters ({', '.join(TOPIC_LETTERS)}); each value is [subject, other], subject "
            f"one of {', '.join(RESEARCH_SUBJECTS)}, other one of {', '.join(RESEARCH_OTHERS)} (a pair "
            "by position, which OpenAPI 3.0 cannot type)",
        ),
    )

    mode = fields.String(required=True, validate=validate.OneOf(MODES))
    observations = fields.List(
        fields.Nested(Observation),
        load_default=list,
        validate=validate.Length(max=MAX_OBSERVATIONS),
        metadata={"description": "what is known so far", "example": OBSERVATION_EXAMPLES[:3]},
    )
    sky_start = Integer(
        load_default=1,
        validate=SECTOR,
        metadata={"description": "first sector of the visible sky (the sky moves one sector a day)"},
    )
    targets_used = Integer(
        load_default=0, validate=validate.Range(0, 2), metadata={"description": "targets spent (2 allowed)"}
    )
    top = Integer(
        load_default=10, validate=validate.Range(1, 100), metadata={"description": "how many actions to rank"}
    )
    rank_by = fields.String(
        load_default="bits_per_day",
        validate=validate.OneOf(("bits_per_day", "goal_bits_per_day")),
        metadata={
            "description": "bits_per_day: outcome entropy per day (the seed's measure); goal_bits_per_day: "
            "information about Planet X's sector and neighbours per day"
        },
    )
    verify_with_z3 = fields.Boolean(
        load_default=False,
        metadata={"description": "also count the remaining boards with Z3 (up to 20,000)"},
    )
    topics = fields.Dict(
        keys=fields.String(validate=validate.OneOf(TOPIC_LETTERS)),
        values=fields.List(fields.String(), validate=[validate.Length(equal=2), _research_pair]),
        load_default=dict,
        metadata={
            "description": "the game's research topics: letter -> [subject, other], the pair of objects the "
            "game shows (subject: asteroid, comet, dwarf_planet or gas_cloud; other: one of those or empty; "
            "the same twice for a topic about one object); each not yet researched is ranked as an action",
            "example": {"A": ["comet", "asteroid"], "B": ["gas_cloud", "empty"], "C": ["dwarf_planet"] * 2},
        },
    )
    researched = fields.List(
        fields.String(validate=validate.OneOf(TOPIC_LETTERS)),
        load_default=list,
        validate=validate.Length(max=len(TOPIC_LETTERS)),
        metadata={"description": "topics already researched (so are those of clues recorded with a topic)"},
    )
    last_action_research = fields.Boolean(
        load_default=False,
        metadata={"description": "the last action was research: none is offered (never twice in a row)"},
    )
    weigh_clues = _weigh_clues()
    difficulty = _difficulty("the game's difficulty, if known (it bounds how many starting facts there are)")
    starting_facts = fields.List(
        fields.Nested(StartingFact),
        load_default=list,
        validate=validate.Length(max=max(DIFFICULTIES.values())),
        metadata={
            "description": "the facts the game dealt at the start, each 'sector S is not a T'; weighed (with "
            "weigh_clues) by how likely the game was to deal them on each board",
            "example": [{"sector": 4, "object": "comet"}, {"sector": 9, "object": "gas_cloud"}],
        },
    )

    @validates_schema
    def _sectors_exist(self, data: dict[str, Any], **kwargs: Any) -> None:
        mode = data.get("mode")
        if mode not in MODES:
            return
        errors: dict[str, Any] = {}
        for index, observation in enumerate(data.get("observations") or []):
            if bad := _check_sectors(observation, mode, SECTOR_FIELDS):
                errors.setdefault("observations", {})[index] = bad
        for index, fact in enumerate(data.get("starting_facts") or []):
            if bad := _check_sectors(fact, mode, ("sector",)):
                errors.setdefault("starting_facts", {})[index] = bad
        errors.update(_check_sectors(data, mode, ("sky_start",)))
        if errors:
            raise ValidationError(errors)

    @validates_schema
    def _as_many_as_dealt(self, data: dict[str, Any], **kwargs: Any) -> None:
        dealt = DIFFICULTIES.get(data.get("difficulty") or "")
        facts = data.get("starting_facts") or []
        if dealt is not None and len(facts) > dealt:
            level = data["difficulty"]
            raise ValidationError(
                f"{'an' if level[0] in 'aeiou' else 'a'} {level} game deals {dealt} starting facts, "
                f"not {len(facts)}",
                "starting_facts",
            )


class SectorProbabilities(Schema):
    sector = fields.Integer()
    probabilities = fields.Dict(keys=fields.String(), values=fields.Float())


class Candidate(Schema):
    sector = fields.Integer()
    probability = fields.Float()


class Determined(Schema):
    planet_x = fields.Boolean(metadata={"description": "Planet X's sector is certain"})
    neighbours = fields.Boolean(metadata={"description": "its sector and both neighbours are certain"})


class LocateGuess(Schema):
    sector = fields.Integer()
    left = fields.String()
    right = fields.String()
    probability = fields.Float()
    candidates = fields.Integer(metadata={"description": "(sector, left, right) combinations left"})


class Outcome(Schema):
    outcome = fields.Raw(
        metadata={
            "description": "a survey's count, the object a target shows, or the clue (as an observation) "
            "a research shows"
        }
    )
    boards = fields.Raw(
        metadata={
            "type": "number",
            "description": "boards giving this outcome; research: expected boards (each board shares itself "
            "equally among the statements the topic may show on it), summing to the boards left",
        }
    )
    probability = fields.Float()
    boards_left = fields.Integer(metadata={"description": "research: the boards left if this clue is shown"})


class RankedAction(Schema):
    action = fields.Dict(metadata={"description": "as an observation without its outcome"})
    label = fields.String()
    days = fields.Integer()
    bits = fields.Float(metadata={"description": "entropy of the outcome"})
    bits_per_day = fields.Float()
    goal_bits = fields.Float(metadata={"description": "information about Planet X's sector and neighbours"})
    goal_bits_per_day = fields.Float()
    outcomes = fields.List(fields.Nested(Outcome))


class DeduceResult(Schema):
    mode = fields.String()
    starting_facts = fields.Integer(metadata={"description": "starting facts taken into account"})
    status = fields.String(metadata={"description": "ok, or contradiction when no board fits"})
    message = fields.String()
    boards = fields.Integer(metadata={"description": "boards consistent with the observations"})
    total_boards = fields.Integer()
    source = fields.String(metadata={"description": "stored (a stored enumeration) or enumerated"})
    z3_count = fields.Integer(allow_none=True, metadata={"description": "Z3's count, with verify_with_z3"})
    sectors = fields.List(fields.Nested(SectorProbabilities))
    planet_x = fields.List(fields.Nested(Candidate))
    determined = fields.Nested(Determined)
    locate = fields.Nested(LocateGuess)
    actions = fields.List(fields.Nested(RankedAction))
    seconds = fields.Float()


# -- simulation ---------------------------------------------------------------------------------
POLICIES = ("survey-only", "entropy", "goal", "research")


class SimulateParams(Schema):
    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule(
            "conference_spaces",
            f"spaces of `mode`'s time track: 2 to {STANDARD_SECTORS} standard, 2 to {MAX_SECTORS} expert",
        ),
    )

    mode = fields.String(required=True, validate=validate.OneOf(MODES))
    games = Integer(load_default=1000, validate=validate.Range(1, 20_000))
    seed = Integer(load_default=0, validate=validate.Range(0, 2**31 - 1))
    policy = fields.String(
        load_default="research",
        validate=validate.OneOf(POLICIES),
        metadata={
            "description": "survey-only: the seed's (surveys, most entropy per day); entropy: the same with "
            "targets; goal: most information about Planet X's sector and neighbours per day, with an early "
            "locate when a guess is likely enough; research (default): goal, researching the game's topics "
            "whenever the rules allow"
        },
    )
    conferences = fields.Boolean(
        load_default=True,
        metadata={"description": "Planet X conference clues at their time (false: a game without them)"},
    )
    conference_spaces = fields.List(
        Integer(validate=validate.Range(2, MAX_SECTORS)),
        load_default=None,
        validate=validate.Length(min=1, max=2),
        metadata={
            "description": "time-track spaces of the conferences (default: 10 standard; 7 and 16 expert)"
        },
    )
    weigh_clues = _weigh_clues()
    difficulty = _difficulty("the starting facts each game deals (default genius)")
    clue_model = fields.String(
        load_default="uniform",
        validate=validate.OneOf(CLUE_MODELS),
        metadata={
            "description": "how the games draw their clues: uniform (each topic's statement uniform among "
            "its true ones) or weighted (EluvK/planetx_server's generator: relations by weight, each object "
            "type in at most 3 clues)"
        },
    )
    clue_model_known = fields.Boolean(
        load_default=False,
        metadata={
            "description": "the player is told the clue_model (default false: it weighs both models and "
            "learns which dealt the game)"
        },
    )
    max_days = Integer(load_default=300, validate=validate.Range(10, 1000))
    games_per_shard = Integer(load_default=None, validate=validate.Range(1, 5000))
    sample_games = Integer(
        load_default=5, validate=validate.Range(0, 100), metadata={"description": "games shown in full"}
    )

    @validates_schema
    def _spaces_exist(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("mode") not in MODES or not data.get("conference_spaces"):
            return
        sectors = STANDARD_SECTORS if data["mode"] == "standard" else MAX_SECTORS
        bad = {
            i: [f"the {data['mode']} track has spaces 2 to {sectors}"]
            for i, space in enumerate(data["conference_spaces"])
            if space > sectors
        }
        if bad:
            raise ValidationError({"conference_spaces": bad})


class SimulateResult(Schema):
    mode = fields.String()
    policy = fields.String()
    games = fields.Integer()
    seed = fields.Integer()
    avg_days = fields.Float(allow_none=True)
    median_days = fields.Float(allow_none=True)
    max_days = fields.Integer(allow_none=True)
    min_days = fields.Integer(allow_none=True)
    unfinished = fields.Integer(metadata={"description": "games that hit max_days"})
    wrong_locates = fields.Integer()
    conference_spaces = fields.List(fields.Integer(), metadata={"description": "empty: no conferences"})
    weigh_clues = fields.Boolean()
    difficulty = fields.String()
    clue_model = fields.String()
    clue_model_known = fields.Boolean()
    avg_days_ci95 = fields.Float(allow_none=True, metadata={"description": "half the mean's 95% interval"})
    started_over = fields.Integer(
        metadata={"description": "games whose player's clue model ruled out every board (it then kept facts)"}
    )
    model_identified = fields.Integer(
        metadata={"description": "games that ended with the player finding the dealing clue_model likelier"}
    )
    action_mix = fields.Dict(
        keys=fields.String(), values=fields.Float(), metadata={"description": "actions per game by type"}
    )
    days_histogram = fields.Dict(keys=fields.String(), values=fields.Integer())
    seconds_per_game = fields.Float(allow_none=True)
    sample = fields.List(fields.Dict())
