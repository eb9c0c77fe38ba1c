"""What a puzzle kind is: its schemas, its solver, and the hooks the generic layers ask it for.

A kind names its solver and CLI group as "module:attribute" strings, imported on first use, so the API
process never loads Z3 and this package never imports the command line above it.
"""

from __future__ import annotations

import importlib
import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from marshmallow import Schema, ValidationError, fields

from schemas.fields import UNSTORABLE, at_path, storable, unstorable
from schemas.rows import RowExportQuery, RowPage, RowPageQuery
from schemas.rules import unknown_rule_fields

if TYPE_CHECKING:  # the API must not import Z3; the command line, the store (only the hooks touch it)
    import numpy as np

    from puzzles.runtime import Run
    from store.db import Database
    from store.rows import RowFilter

SolveFunction = Callable[[dict[str, Any], "Run"], dict[str, Any]]
#: name -> provider, offered to a running puzzle through `Run.resource` (puzzles never query the database)
Resources = Mapping[str, Callable[..., Any]]


@dataclass(frozen=True)
class Rows:
    """A kind whose jobs store rows that clients page through, filter and export. A row is a key (a
    64-bit integer that orders the job's rows: a Planet X board's code, a solution's number) and a payload
    in the kind's own format (bytes: packed bits, JSON, ...) when the key does not say it all. A sharded
    kind's shards return them (puzzles.sharding.ShardResult.rows); any other kind's solver hands them to
    `run.rows(...)`, and the worker stores them with the job's result."""

    #: what the rows are called: the API's path segment and progress counter (e.g. "boards")
    name: str
    #: what one row is called: the key of its rendered form in pages and exports (e.g. "board")
    item: str
    #: the human form of a row (a string, or any JSON: a CSV cell then holds its JSON), given the job's
    #: params, the row's key and its payload
    render: Callable[[dict[str, Any], int, bytes | None], Any]
    #: query parameters for pages (limit and cursor included) and exports; validated with unknown=RAISE
    page_query: type[Schema] = RowPageQuery
    export_query: type[Schema] = RowExportQuery
    #: validated query arguments -> conditions every returned row must meet (store.rows.RowFilter)
    filters: Callable[[dict[str, Any]], list[RowFilter]] = lambda args: []
    #: (the job's params, validated query arguments) -> field messages for filters that no row of this
    #: job can meet (a sector past its board's): a 422, where an empty page, or a filter reading bits past
    #: the key's, would mislead
    refused_filters: Callable[[dict[str, Any], dict[str, Any]], dict[str, list[str]]] = lambda _, __: {}
    #: SQL expressions over the rows' `key` and `payload` that the filters test, for a kind with payloads
    #: (whose rows are a row each): PostgreSQL keeps statistics on each (store.rows.ensure_statistics), so
    #: a filtered page reads the key in order. Keys alone are stored in blocks, filtered in bulk.
    statistics: tuple[str, ...] = ()
    #: the rows carry payloads: stored a row each (store.models.Row), and pages and exports read them. A
    #: kind whose key says it all hands its rows as keys alone (ints), stored in blocks
    #: (store.models.RowBlock)
    payloads: bool = False
    #: (the job's params, many rows' keys) -> each row's rendered form as a row of ASCII bytes, all of one
    #: width (e.g. a Planet X board's letters), for exports at the database's speed: they read keys in
    #: large chunks and render them in bulk (api.bulk_lines), no row alone in Python. The same text
    #: `render` gives, of characters that need no quoting in CSV nor escaping in JSON (letters, digits),
    #: for keys that are never negative. None: exports render each row with `render`.
    fixed_text: Callable[[dict[str, Any], np.ndarray], np.ndarray] | None = None
    #: a page as the API documents it: `items` of {code, <item>} and `next_cursor`
    page_schema: type[Schema] = RowPage
    #: what the rows are, for the API documentation (the description of their tag)
    description: str = ""


def csv_cell(value: Any) -> str:
    """A rendered row as one CSV cell: its text (JSON for anything else), quoted only when it must be."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    if _CSV_SPECIAL.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


_CSV_SPECIAL = re.compile(r'[",\r\n]')


class KindError(ValueError):
    """A kind whose definition disagrees with itself, raised when it is defined (at start-up): e.g.
    cacheable without rows, rows with an unfit name, a result_items that is no list of its result."""


_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")
_NAME_PART = re.compile(r"[a-z][a-z0-9_]*")
_REFERENCE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


@dataclass(frozen=True)
class Pages:
    """Dashboard pages a kind brings: a Flask blueprint of its own, which the dashboard mounts under
    /admin (its pages share the dashboard's sign-in, look and submit budget), and a link in its menu."""

    #: the blueprint, as a "module:attribute" reference: imported by the web layer only
    blueprint: str
    #: the menu link's text, and the endpoint it leads to, within the blueprint (e.g. "notes")
    title: str
    start: str


@dataclass(frozen=True)
class ResultTable:
    """A table the dashboard shows of a job's result (beside the result's JSON)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]


def cell(value: Any) -> Any:
    """A result value as one table cell."""
    if isinstance(value, dict):
        return ", ".join(f"{k} × {v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return value


@dataclass(frozen=True)
class Kind:
    name: str
    summary: str
    params_schema: type[Schema]
    result_schema: type[Schema]
    solver: str  # "module:function", imported on first use
    #: the module also implements puzzles.sharding.ShardedPuzzle: the service runs it in shards
    sharded: bool = False
    #: the solve time a job gets when it asks for none, if not ZOLVE_DEFAULT_TIME_LIMIT;
    #: a sharded job's time counts all its shards together
    default_time_limit: float | None = None
    #: a succeeded job with the same params is served again instead of solved again (unless `fresh`)
    cacheable: bool = False
    #: the job stores rows (e.g. boards) that clients page through and export
    rows: Rows | None = None
    #: what the worker offers this kind's runs, from the database (e.g. stored boards)
    resources: Callable[[Database], Resources] | None = None
    #: jobs whose rows must outlive retention, e.g. because `resources` offers them to other runs
    pinned: Callable[[Database], Iterable[uuid.UUID]] | None = None
    #: the result's list that grows with the work (e.g. every game): past ZOLVE_MAX_RESULT_BYTES it is
    #: stored as rows and paged (GET /jobs/{id}/result/items) instead of returned whole
    result_items: str | None = None
    #: the dashboard's tables of a result (a dict); none: the result's JSON alone
    result_tables: Callable[[dict[str, Any]], list[ResultTable]] | None = None
    #: the result drawn as SVG (params, result) -> an SVG document; see pictures/
    picture: Callable[[dict[str, Any], dict[str, Any]], str] | None = None
    #: params to start from on the dashboard's "new job" page; none: made from the params schema
    example: dict[str, Any] | None = None
    #: a click group of in-process commands for this kind's family ("module:attribute"), added to `zolve`
    cli: str | None = None
    #: the kind's own pages on the dashboard (e.g. Planet X's note sheet)
    pages: Pages | None = None

    def __post_init__(self) -> None:
        if problems := self.problems():
            raise KindError(f"kind {self.name!r} is inconsistent: " + "; ".join(problems))

    def problems(self) -> list[str]:
        """What disagrees in this kind's definition (see KindError); empty when it is sound."""
        found = []
        if not _NAME.fullmatch(self.name):
            found.append("its name must be lower-case words joined by dots, e.g. 'planetx.enumerate'")
        pages = self.pages.blueprint if self.pages is not None else None
        references = {"solver": self.solver, "cli": self.cli, "pages": pages}
        for hook, reference in references.items():
            if reference is not None and not _REFERENCE.fullmatch(reference):
                found.append(f"{hook} must be a 'module:attribute' reference, not {reference!r}")
        if self.rows is not None and not _NAME_PART.fullmatch(self.rows.name):
            found.append(f"its rows' name {self.rows.name!r} must be one lower-case word (a URL segment)")
        if self.cacheable and self.rows is None:
            found.append("a cache hit shares the stored rows of the job it copies: cacheable needs rows")
        if self.pinned is not None and self.rows is None:
            found.append("pinned keeps jobs' rows past retention: it needs rows")
        if self.default_time_limit is not None and not self.default_time_limit > 0:
            found.append("default_time_limit must be a positive number of seconds")
        if self.result_items is not None and not isinstance(
            self.result_schema().fields.get(self.result_items), fields.List
        ):
            found.append(
                f"result_items names {self.result_items!r}, which is not a list of the result schema"
            )
        if unknown := unknown_rule_fields(self.params_schema):
            found.append(f"its params' cross_field_rules name fields it has not: {', '.join(unknown)}")
        if self.example is not None:
            try:
                self.params_schema().load(self.example)
            except ValidationError as refused:
                found.append(f"its example is refused by its params schema: {refused.messages}")
        return found

    @property
    def rows_name(self) -> str:
        return self.rows.name if self.rows else "rows"

    @property
    def counted_rows(self) -> str | None:
        """What its progress counts rows as, or None: a kind that stores no rows counts none."""
        return self.rows.name if self.rows else None

    def solve_function(self) -> SolveFunction:
        solve: SolveFunction = getattr(self.puzzle(), self.solver.partition(":")[2])
        return solve

    def puzzle(self) -> Any:
        """The puzzle module (for sharded kinds: plan, run_shard and combine)."""
        return importlib.import_module(self.solver.partition(":")[0])

    def load_params(self, raw: Any) -> dict[str, Any]:
        """Validated params with defaults filled in; raises marshmallow.ValidationError, whose messages (like
        the params) PostgreSQL can store: a rejected batch item keeps them."""
        try:
            params: dict[str, Any] = self.params_schema().load(raw if raw is not None else {})
        except ValidationError as err:
            raise ValidationError(storable(err.messages)) from None
        if (path := unstorable(params)) is not None:
            raise ValidationError(storable(at_path(path, [UNSTORABLE])))
        return params

    def dump_result(self, result: dict[str, Any]) -> dict[str, Any]:
        dumped: dict[str, Any] = self.result_schema().dump(result)
        return dumped

    def render_row(self, params: dict[str, Any], key: int, payload: bytes | None = None) -> Any:
        """The human form of a stored row (kinds with rows)."""
        return self.rows.render(params, key, payload) if self.rows else str(key)

    def draw(self, params: dict[str, Any], result: dict[str, Any]) -> str | None:
        """The result's picture (SVG), or None for a kind that draws none."""
        return self.picture(params, result) if self.picture else None

    def example_params(self) -> dict[str, Any]:
        """The kind's example, or one made from its params schema: each field's documented example, else
        the first choice of a required field."""
        if self.example is not None:
            return dict(self.example)
        made: dict[str, Any] = {}
        for name, field in self.params_schema().fields.items():
            if "example" in field.metadata:
                made[name] = field.metadata["example"]
            elif field.required and (choices := getattr(field.validate, "choices", None)):
                made[name] = list(choices)[0]
        return made

    def resources_for(self, db: Database) -> Resources:
        return self.resources(db) if self.resources else {}

    def pinned_jobs(self, db: Database) -> set[uuid.UUID]:
        return set(self.pinned(db)) if self.pinned else set()


def load_attribute(reference: str) -> Any:
    """The object a "module:attribute" reference names."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)
