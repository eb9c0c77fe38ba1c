"""Params and results of the Mastermind kinds: `mastermind.guess` (the next guess for a history of feedback)
and `mastermind.play` (whole games against many secrets).

A code is a list of n colours, each 0..k-1. The limits below repeat puzzles.mastermind's where they meet
(this module must not import it: that would load Z3 into the API).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeGuard

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from schemas.rules import CrossFieldRule

MAX_LENGTH = 64
MAX_COLOURS = 32
MAX_HISTORY = 200
MAX_SAMPLES = 200
DEFAULT_SAMPLES = 100
MAX_SECRETS = 10_000
MAX_TURNS = 1_000
#: `secrets: "all"` plays every one of the k**n codes, so only this many (= puzzles.mastermind.ALL_LIMIT)
ALL_LIMIT = 5_000
STRATEGIES = ("consistent", "minimax", "best", "optimal")
#: the sizes (n, k) with a stored optimal decision tree (= puzzles.mastermind.optimal.stored_sizes(); a test
#: checks they agree)
OPTIMAL_SIZES = (
    (2, 2),
    (2, 3),
    (2, 4),
    (2, 5),
    (2, 6),
    (2, 7),
    (2, 8),
    (3, 2),
    (3, 3),
    (3, 4),
    (3, 5),
    (3, 6),
    (3, 7),
    (3, 8),
    (3, 9),
    (3, 10),
    (4, 2),
    (4, 3),
    (4, 4),
    (4, 5),
    (4, 6),
    (4, 7),
    (5, 2),
    (5, 3),
    (5, 4),
    (5, 5),
    (6, 2),
    (6, 3),
)
#: the rule on `strategy: optimal`, which depends on n and k
OPTIMAL_RULE = "optimal only for the sizes n×k that have a stored tree: " + ", ".join(
    f"{n}×{k}" for n, k in OPTIMAL_SIZES
)
MAX_SEED = 2**63 - 1


def _code_problem(code: list[int], n: int, k: int) -> str | None:
    """Why `code` is not a code of n colours in 0..k-1, or None."""
    if len(code) != n:
        return f"has {len(code)} colours, expected n = {n}"
    if any(colour >= k for colour in code):
        return f"uses a colour above k - 1 = {k - 1}"
    return None


class Feedback(Schema):
    guess = fields.List(
        fields.Integer(strict=True, validate=validate.Range(min=0)),
        required=True,
        validate=validate.Length(min=1, max=MAX_LENGTH),
    )
    black = fields.Integer(
        required=True, strict=True, validate=validate.Range(min=0), metadata={"description": "right place"}
    )
    white = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(min=0),
        metadata={"description": "right colour, wrong place"},
    )


class _GameParams(Schema):
    n = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(1, MAX_LENGTH),
        metadata={"description": "code length"},
    )
    k = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(2, MAX_COLOURS),
        metadata={"description": "colours"},
    )
    strategy = fields.String(
        load_default="best",
        validate=validate.OneOf(STRATEGIES),
        metadata={
            "description": "consistent (any code that fits: the seed's SAT AI), minimax (Knuth; "
            "k**n ≤ 10000, else best plays), best (most feedback classes / entropy, candidates beyond the "
            "codes that fit), optimal (the least total guesses over every secret, from a stored decision "
            "tree: only the sizes n×k that have one)"
        },
    )
    seed = fields.Integer(
        load_default=0,
        strict=True,
        validate=validate.Range(0, MAX_SEED),
        metadata={"description": "seeds the sampling: the same params always give the same guesses"},
    )
    samples = fields.Integer(
        load_default=DEFAULT_SAMPLES,
        strict=True,
        validate=validate.Range(1, MAX_SAMPLES),
        metadata={"description": "best, k**n > 100000: how many codes that fit are sampled and tried"},
    )

    @validates_schema
    def _check_optimal(self, data: dict[str, Any], **kwargs: Any) -> None:
        n, k = data.get("n"), data.get("k")
        if data.get("strategy") != "optimal" or n is None or k is None:
            return
        if (n, k) not in OPTIMAL_SIZES:
            sizes = ", ".join(f"{a}×{b}" for a, b in OPTIMAL_SIZES)
            raise ValidationError(
                f"no optimal strategy is stored for n×k = {n}×{k}; it is for {sizes} (else use best)",
                "strategy",
            )


class GuessParams(_GameParams):
    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule("strategy", OPTIMAL_RULE),
        CrossFieldRule(
            "history",
            "each guess has `n` colours, each below `k`; black + white <= `n`; never `n` - 1 black and "
            "1 white",
        ),
    )

    history = fields.List(
        fields.Nested(Feedback),
        load_default=list,
        validate=validate.Length(max=MAX_HISTORY),
        metadata={"description": "the guesses so far and their feedback"},
    )

    @validates_schema
    def _check_history(self, data: dict[str, Any], **kwargs: Any) -> None:
        n, k = data.get("n"), data.get("k")
        if n is None or k is None:
            return
        for index, entry in enumerate(data.get("history") or []):
            problem = _code_problem(entry["guess"], n, k)
            if problem:
                raise ValidationError(f"history[{index}]: the guess {problem}", "history")
            black, white = entry["black"], entry["white"]
            if black + white > n:
                raise ValidationError(
                    f"history[{index}]: black + white = {black + white} is more than n = {n}", "history"
                )
            if black == n - 1 and white == 1:
                raise ValidationError(
                    f"history[{index}]: {n - 1} black and 1 white cannot happen",
                    "history",
                )


class SecretsField(fields.Field[str | dict[str, int] | list[list[int]]]):
    """`"all"`, a list of codes, or `{"sample": count, "seed": s}` (distinct random codes)."""

    default_error_messages = {
        "invalid": 'Must be "all", a list of codes, or {{"sample": count, "seed": integer}}.',
        "too_many": f"At most {MAX_SECRETS} secrets.",
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if value == "all":
            return value
        if isinstance(value, dict):
            count, seed = value.get("sample"), value.get("seed", 0)
            if (
                set(value) - {"sample", "seed"}
                or not _is_int(count)
                or not _is_int(seed)
                or count < 1
                or not 0 <= seed <= MAX_SEED
            ):
                raise self.make_error("invalid")
            if count > MAX_SECRETS:
                raise self.make_error("too_many")
            return {"sample": count, "seed": seed}
        if not isinstance(value, list) or not value:
            raise self.make_error("invalid")
        if len(value) > MAX_SECRETS:
            raise self.make_error("too_many")
        if not all(isinstance(code, list) and all(_is_int(c) and c >= 0 for c in code) for code in value):
            raise self.make_error("invalid")
        return [list(code) for code in value]

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class PlayParams(_GameParams):
    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule("strategy", OPTIMAL_RULE),
        CrossFieldRule(
            "secrets",
            f'"all" only when k**n <= {ALL_LIMIT}; a sample of at most k**n codes; each listed code has `n` '
            "colours, each below `k`",
        ),
    )

    secrets = SecretsField(
        required=True,
        metadata={
            "description": f'"all" (every code, k**n ≤ {ALL_LIMIT}), a list of codes, or '
            f'{{"sample": count, "seed": s}} (count ≤ {MAX_SECRETS} distinct random codes)',
            "oneOf": [
                {"type": "string", "enum": ["all"]},
                {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                {
                    "type": "object",
                    "properties": {"sample": {"type": "integer"}, "seed": {"type": "integer"}},
                    "required": ["sample"],
                },
            ],
        },
    )
    max_turns = fields.Integer(
        load_default=None,
        strict=True,
        validate=validate.Range(1, MAX_TURNS),
        metadata={
            "description": "a game still unsolved after this many guesses stops (default max(4n + 10, 2k))"
        },
    )

    @validates_schema
    def _check_secrets(self, data: dict[str, Any], **kwargs: Any) -> None:
        n, k, secrets = data.get("n"), data.get("k"), data.get("secrets")
        if n is None or k is None or secrets is None:
            return
        space = k**n
        if secrets == "all" and space > ALL_LIMIT:
            raise ValidationError(
                f'"all" plays every code: k**n = {k}**{n} is over {ALL_LIMIT}; list codes or sample them',
                "secrets",
            )
        if isinstance(secrets, dict) and secrets["sample"] > space:
            raise ValidationError(
                f"cannot sample {secrets['sample']} distinct codes from k**n = {space}", "secrets"
            )
        if isinstance(secrets, list):
            for index, code in enumerate(secrets):
                problem = _code_problem(code, n, k)
                if problem:
                    raise ValidationError(f"secrets[{index}] {problem}", "secrets")


class GuessError(Schema):
    code = fields.Integer(metadata={"description": "422"})
    message = fields.String(metadata={"description": "which history entries no code fits together"})
    entries = fields.List(fields.Integer(), metadata={"description": "their indexes in the history"})


class GuessResult(Schema):
    status = fields.String(
        metadata={"description": "ok; solved (the history holds the secret); contradiction (no code fits)"}
    )
    guess = fields.List(fields.Integer(), allow_none=True)
    consistent = fields.Boolean(
        metadata={"description": "the guess fits every feedback (could be the secret)"}
    )
    remaining = fields.Integer(
        allow_none=True,
        metadata={"description": "how many codes fit the history, when that is known exactly"},
    )
    remaining_at_least = fields.Integer(
        metadata={"description": "a lower bound on that count (equal to remaining when known)"}
    )
    strategy = fields.String(metadata={"description": "the strategy that played"})
    note = fields.String(
        allow_none=True, metadata={"description": "why the strategy differs from the one asked"}
    )
    seconds = fields.Float()
    error = fields.Nested(GuessError, allow_none=True)


class Game(Schema):
    index = fields.Integer(metadata={"description": "the secret's place in the params' secrets"})
    secret = fields.List(fields.Integer())
    guesses = fields.List(fields.Nested(Feedback))
    turns = fields.Integer()
    solved = fields.Boolean()
    seconds = fields.Float()


class PlayResult(Schema):
    games = fields.List(fields.Nested(Game))
    games_count = fields.Integer()
    avg_turns = fields.Float(
        allow_none=True,
        metadata={"description": "mean turns over all games (an unsolved game counts its turns)"},
    )
    max_turns = fields.Integer(allow_none=True, metadata={"description": "the most turns any game took"})
    turn_histogram = fields.Dict(
        keys=fields.String(), values=fields.Integer(), metadata={"description": "turns → solved games"}
    )
    unsolved = fields.Integer(metadata={"description": "games stopped at max_turns"})
    seconds_per_game = fields.Float(allow_none=True)
    seconds = fields.Float(metadata={"description": "total play time over all games"})
    strategy = fields.String()
    note = fields.String(allow_none=True)
