"""The registry: every puzzle kind by name. Adding a kind = a module here (its Kind and hooks), one under
`puzzles/`, one under `schemas/`, and its module named in FAMILIES."""

from __future__ import annotations

import importlib
import os

import kinds.dice as dice
import kinds.leaving_earth as leaving_earth
import kinds.mastermind as mastermind
import kinds.planetx as planetx
import kinds.taiji as taiji
from kinds.base import Kind, KindError

FAMILIES = (dice, planetx, mastermind, leaving_earth, taiji)

KINDS: dict[str, Kind] = {}


def get_kind(name: str) -> Kind:
    return KINDS[name]


def register(kind: Kind) -> None:
    """Add a kind (the families below; a plugin module named in ZOLVE_PLUGINS, comma-separated, imported
    by load_plugins). A kind is checked when it is defined (Kind.problems); a second kind of the same name
    is refused here, at start-up."""
    known = KINDS.get(kind.name)
    if known is not None and known is not kind:
        raise KindError(f"two kinds are named {kind.name!r}")
    KINDS[kind.name] = kind


for family in FAMILIES:
    for kind in family.KINDS:
        register(kind)


def load_plugins() -> None:
    """Import the modules ZOLVE_PLUGINS names; each registers its kinds (kinds/__init__ calls this once)."""
    for module in filter(None, (name.strip() for name in os.environ.get("ZOLVE_PLUGINS", "").split(","))):
        importlib.import_module(module)
