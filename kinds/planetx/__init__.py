"""The Search for Planet X: enumerate (sharded, stores every board), deduce and simulate.

Enumerations store their boards as rows; deduction and simulation read a stored enumeration through the
worker (the `planetx.boards` resource) instead of enumerating again."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from kinds.base import Kind, Pages, Resources, ResultTable, Rows
from pictures import planetx as planetx_picture
from puzzles.planetx.board import (  # pure Python, no Z3
    BITS,
    BOARDS_RESOURCE,
    MODES,
    letters_matrix,
    render_board,
)
from schemas.planetx import (
    BoardExportQuery,
    BoardPage,
    BoardQuery,
    DeduceParams,
    DeduceResult,
    EnumerateParams,
    EnumerateResult,
    SimulateParams,
    SimulateResult,
)

if TYPE_CHECKING:  # the hooks below import the store when they run: `zolve --help` loads every kind
    from store.db import Database
    from store.rows import RowFilter

ENUMERATE = "planetx.enumerate"
OBJECT_PARAMS = "exgdac"  # the query parameter of each object code 0..5
CLI = "zolve.commands.planetx:planetx"


def board_filters(args: dict[str, Any]) -> list[RowFilter]:
    """`?x=7&c=1`: boards with Planet X in sector 7 and a comet in sector 1 (a board is its key: 3 bits
    per sector, sector 1 lowest)."""
    from store import rows

    return [
        rows.KeyBits(shift=BITS * (sector - 1), mask=(1 << BITS) - 1, value=obj)
        for obj, name in enumerate(OBJECT_PARAMS)
        for sector in args.get(name) or []
    ]


def refused_board_filters(params: dict[str, Any], args: dict[str, Any]) -> dict[str, list[str]]:
    """A sector past the job's board (`?x=13` on a standard one, of 12) matches no board, and `?e=13`
    would read bits past the code's, all zero, so every board's: both are refused."""
    sectors = MODES[params["mode"]].sectors
    refused = {}
    for name in OBJECT_PARAMS:
        past = sorted({sector for sector in args.get(name) or [] if sector > sectors})
        if past:
            shown = ", ".join(map(str, past))
            refused[name] = [f"{params['mode']} boards have sectors 1 to {sectors}: not {shown}"]
    return refused


def complete_enumeration(db: Database, mode: str) -> uuid.UUID | None:
    """The job whose rows hold the newest stored enumeration of a mode with no extra constraints."""
    from store import rows

    return rows.latest_rows_source(db, ENUMERATE, {"mode": mode}, params_empty=("constraints",))


def stored_boards(db: Database) -> Resources:
    def boards_of(mode: str) -> tuple[str, Callable[[], list[int]]] | None:
        """The stored complete enumeration of a mode as (a key naming it, a loader of its codes)."""
        source = complete_enumeration(db, mode)
        if source is None:
            return None
        from store import rows

        return str(source), lambda: rows.all_keys(db, source)

    return {BOARDS_RESOURCE: boards_of}


def enumerations_read(db: Database) -> set[uuid.UUID]:
    """What deduce and simulate read: kept whatever its age while it is the newest of its mode."""
    return {source for mode in MODES if (source := complete_enumeration(db, mode)) is not None}


def sector_tables(result: dict[str, Any]) -> list[ResultTable]:
    """The dashboard's tables: each sector's counts (or odds) by object, and where Planet X may be."""
    if not isinstance(result.get("sectors"), list):
        return []
    sectors = [s for s in result["sectors"] if isinstance(s, dict)]
    values = "counts" if any("counts" in s for s in sectors) else "probabilities"
    objects = sorted({name for s in sectors for name in (s.get(values) or {})})
    rows = [[s.get("sector"), *[(s.get(values) or {}).get(o) for o in objects]] for s in sectors]
    columns = ["sector", *(planetx_picture.LABELS.get(name, name) for name in objects)]
    if values == "counts":
        columns.append("Planet X probability")
        for row, sector in zip(rows, sectors, strict=True):
            row.append(sector.get("planet_x_probability"))
    tables = [ResultTable(f"Sectors ({values})", columns, rows)]
    candidates = result.get("planet_x")
    if isinstance(candidates, list) and candidates:
        rows = [[c.get("sector"), c.get("probability")] for c in candidates if isinstance(c, dict)]
        tables.append(ResultTable("Planet X", ["sector", "probability"], rows))
    return tables


def board_letters(params: dict[str, Any], codes: np.ndarray) -> np.ndarray:
    """The boards' letters, a row of bytes each, as render_board gives them (Rows.fixed_text)."""
    return letters_matrix(codes, MODES[params["mode"]].sectors)


BOARDS = Rows(
    name="boards",
    item="board",
    render=lambda params, key, payload: render_board(params, key),
    fixed_text=board_letters,
    page_query=BoardQuery,
    export_query=BoardExportQuery,
    filters=board_filters,
    refused_filters=refused_board_filters,
    page_schema=BoardPage,
    description="Enumerated Planet X boards",
)

KINDS = [
    Kind(
        name=ENUMERATE,
        summary="Every possible board of The Search for Planet X (standard or expert), stored",
        params_schema=EnumerateParams,
        result_schema=EnumerateResult,
        solver="puzzles.planetx.enumerate:solve",
        result_tables=sector_tables,
        sharded=True,
        cacheable=True,
        default_time_limit=3600.0,  # shard time, all shards together: an expert enumeration's with room
        rows=BOARDS,
        picture=lambda params, result: planetx_picture.board(result),
        pinned=enumerations_read,
        cli=CLI,
    ),
    Kind(
        name="planetx.deduce",
        summary="Planet X: what observations leave possible, and the next actions ranked by bits per day",
        params_schema=DeduceParams,
        result_schema=DeduceResult,
        solver="puzzles.planetx.deduce:solve",
        result_tables=sector_tables,
        picture=lambda params, result: planetx_picture.board(result),
        resources=stored_boards,
        cli=CLI,
        # a player's note sheet: each entry a new deduction (kinds/planetx/notes.py)
        pages=Pages("kinds.planetx.notes:blueprint", title="Planet X notes", start="notes"),
    ),
    Kind(
        name="planetx.simulate",
        summary="Planet X: whole games on random boards under a policy; days to locate Planet X",
        params_schema=SimulateParams,
        result_schema=SimulateResult,
        solver="puzzles.planetx.simulate:solve",
        result_tables=sector_tables,
        picture=lambda params, result: planetx_picture.days(result),
        # a quick run (the default is 1,000 games): the dashboard's form and the deployment test start here
        example={"mode": "standard", "games": 10, "seed": 7},
        sharded=True,
        default_time_limit=3600.0,
        resources=stored_boards,
        cli=CLI,
    ),
]
