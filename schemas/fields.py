"""Number fields for requests: only ASCII digits make a number, and every number is finite.

marshmallow's Integer and Float hand strings to int() / float(), which also read other scripts' digits
('٣' is 3, '１' is 1), underscores ('1_0' is 10) and padding (' 1'); its Integer also truncates 1.5 to 1.
These accept what JSON and query strings plainly mean: an int (or an integral float) for Integer, any finite
number for Float, or a string of ASCII digits in the same forms. Both are still `integer` and `number` in
the OpenAPI spec. Use them (or `fields.Integer(strict=True)`) for every number a request holds.
"""

from __future__ import annotations

import math
import re
from typing import Any

from marshmallow import fields

_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class Integer(fields.Integer):
    """An integer from an int, an integral float (3.0) or ASCII digits ("-12"); 1.5 and '٣' are errors."""

    def _validated(self, value: Any) -> int:
        if isinstance(value, str) and not _INTEGER.fullmatch(value):
            raise self.make_error("invalid", input=value)
        if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
            raise self.make_error("invalid", input=value)
        return super()._validated(value)


class Float(fields.Float):
    """A finite number from an int, a float or ASCII digits ("1.5", "2e-3"); NaN and infinities are errors
    (marshmallow's allow_nan=False), and so is '٣.5'."""

    def _validated(self, value: Any) -> float:
        if isinstance(value, str) and not _FLOAT.fullmatch(value):
            raise self.make_error("invalid", input=value)
        return super()._validated(value)
