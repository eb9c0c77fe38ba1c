"""Export lines for many rows at once: each row's code in decimal and its fixed-width text between a
format's separators, composed with numpy in one pass over a chunk, never a row at a time in Python (an
expert enumeration's export is 1,138,272 lines)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: "0000" to "9999", each as the 4 ASCII bytes of one uint32: a decimal number is written four digits per
#: division, each group one gather (a gather of digit pairs into a column slice was 9x slower)
_DIGIT_QUADS = (
    np.array([list(f"{n:04d}".encode()) for n in range(10_000)], dtype=np.uint8).view(np.uint32).ravel()
)
#: the 4 bytes of a group with its first k bytes cleared to 0, the pad byte (for leading zeros), by k
_KEEP_LAST = np.array([[0] * k + [0xFF] * (4 - k) for k in range(5)], dtype=np.uint8).view(np.uint32).ravel()
#: 10, 100, ... 10**18: how many digits a code has is where it falls among them
_TENS = 10 ** np.arange(1, 19, dtype=np.int64)
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
    """Each code in decimal as a row of ASCII digits, right-aligned to the widest (rounded up to a multiple
    of 4) and padded on the left with the pad byte."""
    widest = len(str(int(codes.max()))) if len(codes) else 1
    groups = -(-widest // 4)
    padding = 4 * groups - (np.searchsorted(_TENS, codes, side="right") + 1)  # leading bytes to clear
    digits = np.empty((len(codes), groups), dtype=np.uint32)
    rest = codes.astype(np.int64)
    for group in range(groups - 1, -1, -1):
        rest, quad = np.divmod(rest, 10_000)
        digits[:, group] = _DIGIT_QUADS[quad] & _KEEP_LAST[np.clip(padding - 4 * group, 0, 4)]
    return digits.view(np.uint8)


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
