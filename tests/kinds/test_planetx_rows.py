"""Planet X's boards rendered in bulk for exports (kinds.planetx.board_letters, Rows.fixed_text): the
letters render_board gives, in both modes, for boards of every object in every sector."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kinds.planetx import BOARDS, board_letters
from puzzles.planetx.board import LETTERS, MODES, encode, render_board


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_bulk_letters_are_render_boards(mode: str) -> None:
    sectors, draw = MODES[mode].sectors, random.Random(mode)
    codes = [encode([draw.randrange(len(LETTERS)) for _ in range(sectors)]) for _ in range(2000)]
    codes += [encode([obj] * sectors) for obj in range(len(LETTERS))]  # every object, everywhere
    letters = board_letters({"mode": mode}, np.array(codes, dtype=np.int64))
    assert letters.shape == (len(codes), sectors) and letters.dtype == np.uint8
    assert [row.tobytes().decode() for row in letters] == [render_board({"mode": mode}, c) for c in codes]
    assert BOARDS.fixed_text is board_letters


def test_bits_that_name_no_object_read_as_a_question_mark() -> None:
    letters = board_letters({"mode": "standard"}, np.array([encode([6, 7] + [0] * 10)], dtype=np.int64))
    assert letters[0].tobytes().decode() == "??" + "E" * 10
