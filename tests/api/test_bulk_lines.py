"""Export lines composed in bulk (api.bulk_lines): byte for byte the lines Python writes one at a time,
for codes of every width in one chunk."""

from __future__ import annotations

import json

import numpy as np
import pytest

from api.bulk_lines import LineFormat, decimal_columns, render_lines

CODES = [0, 7, 9, 10, 99, 100, 101, 12345, 10**9, 2**54 - 1, 2**62, 2**63 - 1]


def _texts(codes: list[int]) -> np.ndarray:
    return np.array([[ord("A") + (c + k) % 26 for k in range(3)] for c in codes], dtype=np.uint8)


def _text(row: np.ndarray) -> str:
    return row.tobytes().decode()


def test_csv_lines_are_the_code_a_comma_and_the_text() -> None:
    codes = np.array(CODES, dtype=np.int64)
    texts = _texts(CODES)
    expected = "".join(f"{c},{_text(t)}\n" for c, t in zip(CODES, texts, strict=True))
    assert render_lines(codes, texts, LineFormat.csv()) == expected.encode()


def test_ndjson_lines_are_json_dumps_of_each_row() -> None:
    codes = np.array(CODES, dtype=np.int64)
    texts = _texts(CODES)
    expected = "".join(
        json.dumps({"code": c, "board": _text(t)}) + "\n" for c, t in zip(CODES, texts, strict=True)
    )
    assert render_lines(codes, texts, LineFormat.ndjson("board")) == expected.encode()


def test_random_codes_of_mixed_widths_render_as_str_does() -> None:
    draw = np.random.default_rng(52)
    codes = draw.integers(0, 2**54, size=5000) >> draw.integers(0, 54, size=5000)
    texts = np.full((len(codes), 2), ord("x"), dtype=np.uint8)
    expected = "".join(f"{c},xx\n" for c in codes.tolist())
    assert render_lines(codes, texts, LineFormat.csv()) == expected.encode()
    padded = decimal_columns(np.array([5, 123], dtype=np.int64)).tolist()
    assert padded == [[0, 0, 0, ord("5")], [0, *b"123"]]


def test_no_codes_make_no_lines() -> None:
    assert render_lines(np.array([], dtype=np.int64), np.empty((0, 3), np.uint8), LineFormat.csv()) == b""


@pytest.mark.parametrize(
    ("codes", "texts"),
    [
        ([-1, 5], [[65], [66]]),  # a negative code
        ([1, 2], [[65], [0]]),  # a NUL byte in a text
        ([1, 2], [[65]]),  # a text short
    ],
)
def test_what_bulk_lines_cannot_write_is_refused(codes: list[int], texts: list[list[int]]) -> None:
    with pytest.raises(ValueError):
        render_lines(np.array(codes, dtype=np.int64), np.array(texts, dtype=np.uint8), LineFormat.csv())
