"""Puzzle kinds: what each is (schemas, solver) and the hooks the generic layers ask it for (rows,
resources, command-line group). Above `schemas/` and `store/`, below services, workers, API and CLI."""

from kinds.base import Kind, Pages, Rows, load_attribute
from kinds.registry import KINDS, get_kind, load_entry_points, load_plugins, register

__all__ = ["KINDS", "Kind", "Pages", "Rows", "get_kind", "load_attribute", "register"]

load_entry_points()
load_plugins()
