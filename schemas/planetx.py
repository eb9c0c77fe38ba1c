"""Params and results of the Planet X kinds."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

OBJECT_NAMES = ("empty", "planet_x", "gas_cloud", "dwarf_planet", "asteroid", "comet")
MODES = ("standard", "expert")
MAX_SECTORS = 18
MAX_FACTS = 200


class SectorFact(Schema):
    """A plain fact about one sector: `{"sector": 3, "object": "comet", "present": false}` reads
    "sector 3 is not a comet". (Planet X counts as itself here, not as empty.)"""

    sector = fields.Integer(required=True, validate=validate.Range(1, MAX_SECTORS))
    object = fields.String(required=True, validate=validate.OneOf(OBJECT_NAMES))
    present = fields.Boolean(load_default=True)


class EnumerateParams(Schema):
    mode = fields.String(required=True, validate=validate.OneOf(MODES))
    constraints = fields.List(
        fields.Nested(SectorFact),
        load_default=list,
        validate=validate.Length(max=MAX_FACTS),
        metadata={"description": "extra facts every board must satisfy"},
    )
    shard_depth = fields.Integer(
        load_default=None,
        validate=validate.Range(1, 8),
        metadata={
            "description": "shard by the objects of this many first sectors (default: 2 standard, 5 expert)"
        },
    )
    max_shard_boards = fields.Integer(
        load_default=None,
        validate=validate.Range(100, 1_000_000),
        metadata={"description": "a shard finding more boards splits by one more sector (default 12000)"},
    )


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


class BoardQuery(Schema):
    """Keyset pages of a job's boards; `?x=7` keeps boards with Planet X in sector 7 (repeatable, and
    likewise e, g, d, a, c for empty, gas cloud, dwarf planet, asteroid, comet)."""

    limit = fields.Integer(load_default=100, validate=validate.Range(1, 1000))
    cursor = fields.Integer(
        validate=validate.Range(min=0), metadata={"description": "next_cursor of the previous page"}
    )
    e = fields.List(fields.Integer(validate=validate.Range(1, MAX_SECTORS)))
    x = fields.List(fields.Integer(validate=validate.Range(1, MAX_SECTORS)))
    g = fields.List(fields.Integer(validate=validate.Range(1, MAX_SECTORS)))
    d = fields.List(fields.Integer(validate=validate.Range(1, MAX_SECTORS)))
    a = fields.List(fields.Integer(validate=validate.Range(1, MAX_SECTORS)))
    c = fields.List(fields.Integer(validate=validate.Range(1, MAX_SECTORS)))


class BoardExportQuery(BoardQuery):
    class Meta:
        exclude = ("limit", "cursor")


class BoardRow(Schema):
    code = fields.Integer(metadata={"description": "3 bits per sector, sector 1 lowest (E0 X1 G2 D3 A4 C5)"})
    board = fields.String(metadata={"description": "one letter per sector, sector 1 first"})


class BoardPage(Schema):
    items = fields.List(fields.Nested(BoardRow))
    next_cursor = fields.Integer(allow_none=True)
