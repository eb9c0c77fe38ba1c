"""Planet X's boards rendered by PostgreSQL for exports (kinds.planetx.board_letters_sql): the letters
render_board gives, in both modes, for boards of every object in every sector."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import text

from kinds.planetx import board_letters_sql
from puzzles.planetx.board import LETTERS, MODES, encode, render_board


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_databases_letters_are_render_boards(db, mode: str) -> None:
    sectors, draw = MODES[mode].sectors, random.Random(mode)
    codes = [encode([draw.randrange(len(LETTERS)) for _ in range(sectors)]) for _ in range(2000)]
    codes += [encode([obj] * sectors) for obj in range(len(LETTERS))]  # every object, everywhere
    values = ", ".join(f"({code}::bigint)" for code in codes)
    query = f"SELECT key, {board_letters_sql({'mode': mode})} FROM (VALUES {values}) AS t(key)"
    with db.session() as session:
        rendered = dict(session.execute(text(query)).tuples().all())
    assert rendered == {code: render_board({"mode": mode}, code) for code in codes}
