"""The registry: every puzzle kind by name, from the `zolve.kinds` entry-point group. Adding a kind = a
module here (its Kind and hooks) named in pyproject.toml's group, one under `puzzles/`, one under
`schemas/`; a kind of someone else's = a distribution with an entry in that group."""

from __future__ import annotations

import importlib
import logging
import os
import tomllib
from importlib.metadata import PackageNotFoundError, distribution, entry_points
from pathlib import Path

from kinds.base import Kind, KindError, load_attribute

log = logging.getLogger("zolve.kinds")

#: the entry-point group; each entry names an iterable of Kind (`package.module:KINDS`)
GROUP = "zolve.kinds"

KINDS: dict[str, Kind] = {}


def get_kind(name: str) -> Kind:
    return KINDS[name]


def register(kind: Kind) -> None:
    """Add a kind (those of the entry points; a module named in ZOLVE_PLUGINS calls it itself). A kind is
    checked when it is defined (Kind.problems); a second kind of the same name is refused here, at
    start-up."""
    known = KINDS.get(kind.name)
    if known is not None and known is not kind:
        raise KindError(f"two kinds are named {kind.name!r}")
    KINDS[kind.name] = kind


def declared() -> list[tuple[str, str]]:
    """(name, `module:attribute`) of every entry of the group, by name. A checkout run
    uninstalled (its directory on PYTHONPATH, as on a machine without a package index) has no metadata:
    its own entries are then read from its pyproject.toml, the one place they are written."""
    found = [(entry.name, entry.value) for entry in entry_points(group=GROUP)]
    try:
        distribution("zolve")
    except PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        own = tomllib.loads(pyproject.read_text())["project"]["entry-points"][GROUP]
        found = list(own.items()) + [entry for entry in found if entry[0] not in own]
    return sorted(found)


def load_entry_points() -> None:
    for name, target in declared():
        kinds: list[Kind] = list(load_attribute(target))  # read twice below: an iterator would not be
        for kind in kinds:
            register(kind)
        log.debug("kinds of %s: %s", name, ", ".join(kind.name for kind in kinds))


def load_plugins() -> None:
    """Import the modules ZOLVE_PLUGINS names (comma-separated): kinds not packaged as a distribution (the
    tests' own), each module calling `register` (kinds/__init__ calls this once, after the entry points)."""
    for module in filter(None, (name.strip() for name in os.environ.get("ZOLVE_PLUGINS", "").split(","))):
        importlib.import_module(module)
