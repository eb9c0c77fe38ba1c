"""Export lines for many rows at once: each row's code in decimal and its fixed-width text between a
format's separators, composed with numpy in one pass over a chunk, never a row at a time in Python (an
expert enumeration's export is 1,138,272 lines)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: "00" to "99": a decimal number is written two digits per division
_DIGIT_PAIRS = np.array([[ord(str(n // 10)), ord(str(n % 10))] for n in range(100)], dtype=np.uint8)
#: a byte that no line holds: it pads each code to the chunk's widest and is then taken out
_PAD = b"\0"


@dataclass(frozen=True)
class LineFormat:
    """A line is `before` + the code in decimal + `between` + the row's text + `after`."""

    before: bytes
    between: bytes
    after: bytes

    @classmethod
    def csv(cls) -> LineFormat:
        return cls(b"", b",", b"\n")

    @classmethod
    def ndjson(cls, item: str) -> LineFormat:
        """json.dumps({"code": code, item: text}) and a newline, byte for byte (for text that JSON leaves
        as it is)."""
        return cls(b'{"code": ', f', "{item}": "'.encode(), b'"}\n')


def decimal_columns(codes: np.ndarray) -> np.ndarray:
    """Each code in decimal as a row of ASCII digits, right-aligned to the widest and padded on the left
    with the pad byte."""
    widest = len(str(int(codes.max()))) if len(codes) else 1
    width = widest + widest % 2
    digits = np.empty((len(codes), width), dtype=np.uint8)
    rest = codes.astype(np.int64)
    for column in range(width - 2, -1, -2):
        rest, pair = np.divmod(rest, 100)
        digits[:, column : column + 2] = _DIGIT_PAIRS[pair]
    tens = 10 ** np.arange(1, min(width, 19), dtype=np.int64)  # 10**19 is past int64
    written = np.searchsorted(tens, codes, side="right") + 1  # how many digits each code has
    digits[np.arange(width)[None, :] < (width - written)[:, None]] = _PAD[0]
    return digits


def render_lines(codes: np.ndarray, texts: np.ndarray, form: LineFormat) -> bytes:
    """One line per code, in order: `form` around each code and the same row of `texts` (uint8, one row
    per code, all of one width)."""
    if len(codes) == 0:
        return b""
    if int(codes.min()) < 0:
        raise ValueError("bulk export lines need codes that are not negative")
    if len(texts) != len(codes) or not texts.all():
        raise ValueError("bulk export lines need one text per code, without NUL bytes")
    parts = [np.frombuffer(part, dtype=np.uint8) for part in (form.before, form.between, form.after)]
    pieces = [parts[0], decimal_columns(codes), parts[1], texts.astype(np.uint8, copy=False), parts[2]]
    lines = np.empty((len(codes), sum(p.shape[-1] for p in pieces)), dtype=np.uint8)
    at = 0
    for piece in pieces:
        lines[:, at : at + piece.shape[-1]] = piece
        at += piece.shape[-1]
    return lines.tobytes().replace(_PAD, b"")
