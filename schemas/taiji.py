"""Params and results of the Taiji kinds: `taiji.solve` (a solution, and whether it is unique) and
`taiji.enumerate` (every solution, stored as rows)."""

from __future__ import annotations

from typing import Any, ClassVar

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from puzzles.taiji.code import COLOURS, MAX_SIDE, SYMBOLS, PuzzleError, parse_code, read_grid
from schemas.rules import WHOLE, CrossFieldRule

MAX_CODE_LENGTH = 4000


class TaijiTile(Schema):
    """One existing tile of an explicit grid; every field is optional (a plain, free tile)."""

    symbol = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.OneOf(SYMBOLS),
        metadata={"description": "dice, flower, diamond, or null for no symbol"},
    )
    value = fields.Integer(
        load_default=0,
        strict=True,
        validate=validate.Range(-9, 9),
        metadata={
            "description": "dice: pips 1…9, or −1…−9 for a negative die; flower: yellow petals 0…4 "
            "(the other petals are purple); otherwise 0"
        },
    )
    colour = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.OneOf(list(COLOURS)),
        metadata={
            "description": "r o y g b p k w (red, orange, yellow, green, blue, purple, white, black) "
            "or null (uncoloured: a colour of its own); a flower's colour is ignored, it counts as purple "
            "unless all 4 petals are yellow and as yellow unless none is"
        },
    )
    fixed = fields.Boolean(load_default=False, metadata={"description": "the tile cannot be flipped"})
    lit = fields.Boolean(
        load_default=False, metadata={"description": "state of a fixed tile (ignored if free)"}
    )
    hidden = fields.Boolean(
        load_default=False, metadata={"description": "drawn hidden; its rule still holds"}
    )
    join_left = fields.Boolean(
        load_default=False, metadata={"description": "joined to the tile on its left: they flip together"}
    )
    join_up = fields.Boolean(
        load_default=False, metadata={"description": "joined to the tile above: they flip together"}
    )


class TaijiPuzzle(Schema):
    """A Taiji puzzle, as a Taiji Maker code or an explicit grid."""

    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule(WHOLE, "exactly one of `code` and `grid` is given"),
        CrossFieldRule(
            "code", "a Taiji Maker code that reads: `<width>:<tiles>`, its tiles filling rows of that width"
        ),
        CrossFieldRule(
            "grid",
            "every row as long as the first; a tile's `value` allowed for its `symbol`; no hole joined",
        ),
    )

    code = fields.String(
        load_default=None,
        validate=validate.Length(1, MAX_CODE_LENGTH),
        metadata={"description": "a Taiji Maker puzzle code, e.g. '3:Kw202200Fw62Dw4' (give code or grid)"},
    )
    grid = fields.List(
        fields.List(
            fields.Nested(TaijiTile, allow_none=True),
            validate=validate.Length(1, MAX_SIDE, error=f"a row holds 1 to {MAX_SIDE} tiles"),
        ),
        load_default=None,
        validate=validate.Length(1, MAX_SIDE, error=f"the grid has 1 to {MAX_SIDE} rows"),
        metadata={
            "description": "the puzzle as rows of tiles, top row first; a tile is null (a hole) or an object "
            "{symbol, value, colour, fixed, lit, hidden, join_left, join_up} (give code or grid)"
        },
    )

    @validates_schema
    def _check_puzzle(self, data: dict[str, Any], **kwargs: Any) -> None:
        code, grid = data.get("code"), data.get("grid")
        if (code is None) == (grid is None):
            raise ValidationError("give exactly one of code and grid", "_schema")
        field = "code" if code is not None else "grid"
        try:
            if code is not None:
                parse_code(code)
            elif grid is not None:
                read_grid(grid)
        except PuzzleError as err:
            raise ValidationError(str(err), field) from None


class TaijiParams(TaijiPuzzle):
    unique = fields.Boolean(
        load_default=True,
        metadata={
            "description": "also search for a second solution (up to flipping every tile, when no tile "
            "is fixed)"
        },
    )


class TaijiResult(Schema):
    status = fields.String(required=True, metadata={"description": "solved, or unsat when no lighting works"})
    solution = fields.List(
        fields.List(fields.Integer(allow_none=True)),
        allow_none=True,
        metadata={"description": "rows of 1 (lit) / 0 (unlit), null for holes"},
    )
    rendering = fields.List(
        fields.String(), allow_none=True, metadata={"description": "text rows: # lit, . unlit, space = hole"}
    )
    unique = fields.Boolean(
        allow_none=True,
        metadata={
            "description": "no second solution exists; null when not asked, when unsat, or when the time "
            "limit ran out during that search (the first solution is still returned); see up_to_flip"
        },
    )
    up_to_flip = fields.Boolean(
        metadata={
            "description": "the puzzle has no fixed tile, so flipping every tile of a solution gives "
            "another one: `unique` and `second_solution` count the two as one"
        }
    )
    second_solution = fields.List(
        fields.List(fields.Integer(allow_none=True)),
        allow_none=True,
        metadata={"description": "another solution, when `unique` is false"},
    )
    width = fields.Integer()
    height = fields.Integer()
    seconds = fields.Float(metadata={"description": "solve time, uniqueness check included"})
    valid = fields.Boolean(
        allow_none=True,
        metadata={
            "description": "an independent rule checker (no Z3) accepts the solution(s); null when unsat"
        },
    )


# -- every solution (taiji.enumerate) ---------------------------------------------------------------
MAX_SOLUTIONS = 100_000


class TaijiEnumerateParams(TaijiPuzzle):
    max_solutions = fields.Integer(
        load_default=1000,
        strict=True,
        validate=validate.Range(1, MAX_SOLUTIONS),
        metadata={
            "description": f"stop after this many solutions (1 to {MAX_SOLUTIONS:,}); the result then says "
            "whether there are more ('at least N')"
        },
    )


class TaijiEnumerateResult(Schema):
    count = fields.Integer(
        required=True, metadata={"description": "solutions found (stored as rows: GET /jobs/{id}/solutions)"}
    )
    complete = fields.Boolean(
        metadata={"description": "every solution was found: count is exact (else: at least count)"}
    )
    at_least = fields.Integer(
        allow_none=True, metadata={"description": "count, when there may be more (null when complete)"}
    )
    ended = fields.String(
        metadata={"description": "complete; cap (max_solutions reached, and more exist); time limit"}
    )
    summary = fields.String(metadata={"description": "e.g. 'exactly 3 solutions', 'at least 1000 solutions'"})
    unique = fields.Boolean(
        allow_none=True, metadata={"description": "exactly one solution; null when none was found in time"}
    )
    up_to_flip = fields.Boolean(
        metadata={"description": "no tile is fixed, so a solution and its full flip count as one"}
    )
    undecided = fields.List(
        fields.List(fields.Integer()),
        metadata={"description": "[row, column] of each tile the solutions found disagree on"},
    )
    first_solution = fields.List(
        fields.List(fields.Integer(allow_none=True)),
        allow_none=True,
        metadata={"description": "the first solution found: rows of 1 (lit) / 0 (unlit), null for holes"},
    )
    valid = fields.Boolean(
        metadata={"description": "an independent rule checker (no Z3) accepts every solution found"}
    )
    width = fields.Integer()
    height = fields.Integer()
    seconds = fields.Float()


class TaijiSolutionRow(Schema):
    code = fields.Integer(metadata={"description": "the solution's number, in the order it was found"})
    solution = fields.String(metadata={"description": "its rows, top first, joined by '/': # lit, . unlit"})


class TaijiSolutionPage(Schema):
    items = fields.List(fields.Nested(TaijiSolutionRow))
    next_cursor = fields.Integer(allow_none=True)
