"""Params and result of the `dice` kind (intransitive dice)."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from schemas.fields import Integer
from schemas.rules import CrossFieldRule

MAX_DICE = 10
MAX_FACES = 20
MAX_FACE_VALUE = 400


class BeatsField(fields.Field[str | list[list[int]]]):
    """`"cycle"` or an explicit list of `[winner, loser]` die-index pairs."""

    default_error_messages = {
        "invalid": 'Must be "cycle" or a list of [winner, loser] pairs of die indexes.',
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str | list[list[int]]:
        if value == "cycle":
            return cast(str, value)
        if not isinstance(value, list) or not value:
            raise self.make_error("invalid")
        pairs = []
        for pair in value:
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
            ):
                raise self.make_error("invalid")
            pairs.append([pair[0], pair[1]])
        return pairs

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


class DiceParams(Schema):
    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule(
            "beats", "each pair is [winner, loser], two distinct die indexes below `dice`; no pair twice"
        ),
        CrossFieldRule("max_face", "at least `dice`, so that every die can have distinct faces"),
    )

    dice = Integer(
        required=True, validate=validate.Range(2, MAX_DICE), metadata={"description": "number of dice"}
    )
    faces = Integer(
        required=True, validate=validate.Range(2, MAX_FACES), metadata={"description": "faces per die"}
    )
    max_face = Integer(
        load_default=None,
        validate=validate.Range(1, MAX_FACE_VALUE),
        metadata={"description": "largest face value (default dice × faces)"},
    )
    beats = BeatsField(
        load_default="cycle",
        metadata={
            "description": '"cycle" (each die beats the next, the last the first) or [[winner, loser], ...]',
            "oneOf": [
                {"type": "string", "enum": ["cycle"]},
                {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            ],
        },
    )

    @validates_schema
    def _check_relation(self, data: dict[str, Any], **kwargs: Any) -> None:
        beats, dice = data.get("beats"), data.get("dice")
        if isinstance(beats, list) and dice is not None:
            seen = set()
            for winner, loser in beats:
                if not (0 <= winner < dice and 0 <= loser < dice):
                    raise ValidationError(f"die indexes must be between 0 and {dice - 1}", "beats")
                if winner == loser:
                    raise ValidationError("a die cannot beat itself", "beats")
                if (winner, loser) in seen:
                    raise ValidationError(f"pair {[winner, loser]} is listed twice", "beats")
                seen.add((winner, loser))
        max_face, faces = data.get("max_face"), data.get("faces")
        if max_face is not None and dice and faces and max_face < dice:
            raise ValidationError("max_face must leave room for distinct faces on every die", "max_face")


class DiceResult(Schema):
    status = fields.String(required=True, metadata={"description": "sat, or unsat when no dice fit"})
    dice = fields.List(fields.List(fields.Integer()), allow_none=True)
    wins = fields.Integer(allow_none=True, metadata={"description": "rolls each winner wins"})
    out_of = fields.Integer(metadata={"description": "faces²"})
    optimal = fields.Boolean(metadata={"description": "true once no larger win count is satisfiable"})
