"""A read model filled from a row: each of the model's fields read from the row's attribute of that name."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar, Protocol, TypeVar


class _Dataclass(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]


ViewT = TypeVar("ViewT", bound=_Dataclass)


def copied(view: type[ViewT], row: object) -> ViewT:
    """A `view` of `row`: its fields are the row's attributes (a copy: the row may go with its session)."""
    return view(**{field.name: getattr(row, field.name) for field in fields(view)})
