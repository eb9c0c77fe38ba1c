"""Fields and checks for request values: numbers, and text PostgreSQL can store.

Numbers in a JSON body are JSON numbers: `Integer` takes an int only (marshmallow's `strict=True`: "3",
3.0 and true are errors) and `Float` an int or a finite float (never a string such as "10"), so every
number of a body is read one way, as JSON means it; `Boolean` takes true or false only.

A query string holds text by nature, so `QueryInteger` and `QueryFloat` also read a string, of ASCII digits
only. marshmallow's own Integer and Float hand strings to int() / float(), which also read other scripts'
digits ('٣' is 3, '１' is 1), underscores ('1_0' is 10) and padding (' 1'); its Integer also truncates 1.5
to 1. All four are still `integer` and `number` in the OpenAPI spec.

Text: PostgreSQL's text and jsonb cannot hold a NUL character, and a lone surrogate ("\\ud800" in JSON)
cannot even be encoded; so `check_storable` refuses them in a field, `unstorable` finds them (or a NaN or
infinity) anywhere in loaded params, and `storable` escapes them in error messages, which echo the input.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, cast

from marshmallow import ValidationError, fields

UNSTORABLE = "NUL characters, lone surrogates, NaN and infinities cannot be stored"
_UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")

_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class Integer(fields.Integer):
    """An integer of a JSON body: an int; "3", 3.0, 1.5 and true are errors."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)


class Boolean(fields.Boolean):
    """A boolean of a JSON body: true or false; "yes", "true", 1 and 0 are errors (marshmallow's own takes
    each of them)."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class Float(fields.Float):
    """A number of a JSON body: an int or a finite float; "10", NaN and infinities are errors (marshmallow's
    allow_nan=False)."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> float:
        if isinstance(value, str):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class QueryInteger(fields.Integer):
    """An integer of a query string: ASCII digits ("-12"), or an int or integral float where the args come
    as data; 1.5 and '٣' are errors."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> int:
        if isinstance(value, str) and not _INTEGER.fullmatch(value):
            raise self.make_error("invalid", input=value)
        if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class QueryFloat(fields.Float):
    """A finite number of a query string: ASCII digits ("1.5", "2e-3"), or an int or a float; NaN,
    infinities and '٣.5' are errors."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> float:
        if isinstance(value, str) and not _FLOAT.fullmatch(value):
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


def check_storable(text: str) -> None:
    """A validator: the text holds no NUL character and no lone surrogate."""
    if _UNSTORABLE_TEXT.search(text):
        raise ValidationError(UNSTORABLE)


def unstorable(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """Where in `value` (keys included) the first string or number PostgreSQL cannot store is, or None."""
    if isinstance(value, str):
        return path if _UNSTORABLE_TEXT.search(value) else None
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and _UNSTORABLE_TEXT.search(key):
                return (*path, key)
            if (found := unstorable(item, (*path, key))) is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if (found := unstorable(item, (*path, index))) is not None:
                return found
    return None


def storable(messages: Any) -> Any:
    """Error messages (a marshmallow messages dict, list or string) with unstorable characters escaped."""
    if isinstance(messages, str):
        return _UNSTORABLE_TEXT.sub(lambda match: f"\\u{ord(match[0]):04x}", messages)
    if isinstance(messages, Mapping):
        return {storable(key): storable(item) for key, item in messages.items()}
    if isinstance(messages, list | tuple):
        return [storable(item) for item in messages]
    return messages


def at_path(path: tuple[Any, ...], messages: list[str]) -> dict[Any, Any]:
    """Messages nested under a path as marshmallow nests them: ("a", 0) → {"a": {0: messages}}."""
    nested: Any = messages
    for key in reversed(path or ("_schema",)):
        nested = {key: nested}
    return cast(dict[Any, Any], nested)  # a dict: there is at least one key
