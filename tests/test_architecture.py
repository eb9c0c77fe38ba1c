"""The tree's import statements: no module imports itself back through others, puzzles/ stays pure Z3,
the client needs none of the service. Which package may import which (the layers) is import-linter's
contract in pyproject.toml, run by `make test`."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the product's packages (their layers: [tool.importlinter] in pyproject.toml)
PACKAGES = (
    "api",
    "core",
    "kinds",
    "migrations",
    "pictures",
    "puzzles",
    "schemas",
    "services",
    "store",
    "workers",
    "zolve",
)
#: what a puzzle must never need: it runs in the worker, the CLI and benchmarks alike
NOT_IN_PUZZLES = {"flask", "celery", "kombu", "redis", "sqlalchemy", "psycopg", "marshmallow"}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING`, as an `if` test (not `not TYPE_CHECKING`, nor any other
    expression that mentions it)."""
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING" and ast.unparse(test.value) == "typing"
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _scanned_children(node: ast.AST, type_only: bool) -> list[ast.AST]:
    """A node's children, less the body of `if TYPE_CHECKING:` (never run; its `else` does run) unless
    `type_only` imports count too."""
    if not type_only and isinstance(node, ast.If) and _is_type_checking(node.test):
        return [node.test, *node.orelse]
    return list(ast.iter_child_nodes(node))


def _import_nodes(tree: ast.AST, type_only: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import, including those inside functions; those in the body of `if TYPE_CHECKING:` only if
    `type_only` (a type checker reads them: an import circle through them is a circle all the same)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(_scanned_children(node, type_only))


def _imported(module: str, path: Path, type_only: bool = False) -> set[str]:
    """The modules an import statement names: `import a.b` names a.b; `from a import b, c` names a and,
    where b or c is a submodule, a.b or a.c too."""
    names = set()
    for node in _import_nodes(ast.parse(path.read_text(), str(path)), type_only):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:  # relative: from . import x
            package = module.split(".")[: len(module.split(".")) - node.level + (path.name == "__init__.py")]
            base = ".".join([*package, *([base] if base else [])])
        names.add(base)
        names.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return names


GRAPH = {module: _imported(module, path) for module, path in MODULES.items()}
#: with the imports only a type checker reads (`if TYPE_CHECKING:`)
TYPED_GRAPH = {module: _imported(module, path, type_only=True) for module, path in MODULES.items()}


def _ours(name: str) -> str | None:
    """The module of ours an imported name runs (a name inside a module: that module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def test_no_module_imports_itself_back_through_others_type_only_imports_included() -> None:
    graph = TYPED_GRAPH.items()
    edges = {module: {_ours(name) for name in names} - {module, None} for module, names in graph}
    cycles = [component for component in _strongly_connected(edges) if len(component) > 1]
    assert cycles == []


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def test_only_the_body_of_if_type_checking_is_skipped() -> None:
    source = """
import typing
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from api import skipped_1
else:
    from api import seen_in_else
if typing.TYPE_CHECKING:
    import api.skipped_2
if not TYPE_CHECKING:
    from api import seen_under_not
if TYPE_CHECKING or True:
    from api import seen_under_or
def later():
    if TYPE_CHECKING:
        from api import skipped_3
    from api import seen_in_function
"""
    imported = {alias.name for node in _import_nodes(ast.parse(source)) for alias in node.names}
    imported -= {"typing", "TYPE_CHECKING"}
    assert imported == {"seen_in_else", "seen_under_not", "seen_under_or", "seen_in_function"}
    typed = {alias.name for node in _import_nodes(ast.parse(source), True) for alias in node.names}
    assert typed - imported == {"typing", "TYPE_CHECKING", "skipped_1", "api.skipped_2", "skipped_3"}


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in _strongly_connected(edges) if len(c) > 1] == [["a", "b", "c"]]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("puzzles")))
def test_puzzles_are_pure(module: str) -> None:
    assert {name.split(".")[0] for name in GRAPH[module]} & NOT_IN_PUZZLES == set()


#: the client library's own distribution (client/): what a client user installs, and nothing of the service
CLIENT = ROOT / "client" / "zolve_client"
#: what it may import besides the standard library and itself: its two dependencies, and rich where asked
CLIENT_NEEDS = {"httpx", "tenacity", "rich"}


@pytest.mark.parametrize("path", sorted(CLIENT.glob("*.py")), ids=lambda path: path.name)
def test_the_client_library_needs_none_of_the_service(path: Path) -> None:
    module = f"zolve_client.{path.stem}".removesuffix(".__init__")
    imported = {name.split(".")[0] for name in _imported(module, path)} - {"zolve_client", "__future__"}
    assert imported - set(sys.stdlib_module_names) <= CLIENT_NEEDS


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("pictures")))
def test_pictures_need_only_the_standard_library(module: str) -> None:
    """A picture is drawn from plain data: no web framework, database or solver behind it."""
    outside = {name.split(".")[0] for name in GRAPH[module]} - {"pictures", "__future__"}
    assert outside - set(sys.stdlib_module_names) == set()


def test_every_registered_kind_agrees_with_itself() -> None:
    """A kind checks its flags when it is defined (kinds.base.Kind.problems); the registry holds none
    that disagrees (tests/kinds/test_kind_contract.py shows each rule refusing a bad kind)."""
    from kinds import KINDS

    assert {name: kind.problems() for name, kind in KINDS.items() if kind.problems()} == {}


#: the generic layers: they serve every kind alike and name none (issue 33, item 4)
GENERIC = ("api", "core", "services", "store", "workers")


def _kind_words() -> re.Pattern[str]:
    """Each kind family's name (`planetx` of planetx.enumerate), as a word, spelt with _ or a space too."""
    from kinds import KINDS

    families = {name.split(".")[0] for name in KINDS if not name.startswith("test.")}
    spellings = {spelling for family in families for spelling in (family, family.replace("_", " "))}
    spellings |= {"planet_x", "planet x"}
    return re.compile(r"(?<![a-z])(" + "|".join(sorted(map(re.escape, spellings))) + r")(?![a-z])", re.I)


def _named_in_code(path: Path) -> list[str]:
    """The strings and names of a module's code: not its docstrings nor its comments (examples there
    are fine)."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append(node.value)
        elif isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Attribute):
            found.append(node.attr)
        elif isinstance(node, ast.alias):
            found.append(node.name)
    return found


def _template_text(path: Path) -> str:
    return re.sub(r"{#.*?#}|<!--.*?-->|/\*.*?\*/", "", path.read_text(), flags=re.S)


def kind_names_in_generic_layers(words: re.Pattern[str]) -> list[str]:
    found = []
    for package in GENERIC:
        for path in sorted((ROOT / package).rglob("*")):
            where = path.relative_to(ROOT)
            if path.suffix == ".py":
                found += [f"{where}: {text!r}" for text in _named_in_code(path) if words.search(text)]
            elif path.suffix in (".html", ".js", ".css"):
                found += [f"{where}: {hit.group()!r}" for hit in words.finditer(_template_text(path))]
    return found


def test_the_generic_layers_name_no_kind() -> None:
    """api/, core/, services/, store/ and workers/ work for every kind alike: what is a kind's (its pages,
    its words) comes through its hooks. Docstrings and comments may give a kind as an example."""
    assert kind_names_in_generic_layers(_kind_words()) == []


def test_the_kind_name_check_finds_a_name(tmp_path: Path) -> None:
    words = _kind_words()
    code = 'def f():\n    """planetx.deduce, as an example"""\n    return "planetx.deduce"  # Planet X\n'
    assert [text for text in _named_in_code(_write(tmp_path / "a.py", code)) if words.search(text)] == [
        "planetx.deduce"
    ]
    assert words.findall(_template_text(_write(tmp_path / "a.html", "{# dice #}<a>Planet X notes</a>"))) == [
        "Planet X"
    ]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _pages_modules() -> set[str]:
    from kinds import KINDS

    return {kind.pages.blueprint.partition(":")[0] for kind in KINDS.values() if kind.pages}


#: the web layer's published surface for a kind's pages: the one module of api/ they may import
KIND_PAGES_SURFACE = "api.kind_pages"


def test_kinds_pages_import_only_the_web_layers_published_surface() -> None:
    """A kind's pages build on api.kind_pages (and services, schemas, store models), never on the
    dashboard's internals, type-only imports included."""
    reached = sorted(
        f"{module} imports {name}"
        for module in _pages_modules()
        for name in TYPED_GRAPH[module]
        if name.split(".")[0] == "api" and _ours(name) != KIND_PAGES_SURFACE and name != "api"
    )
    assert reached == []
    assert KIND_PAGES_SURFACE in MODULES


def test_kinds_pages_alone_in_kinds_reach_the_web_layer_and_nothing_imports_them() -> None:
    """A kind's pages (Kind.pages) are the one part of a kind that may import api/: the dashboard mounts
    them through the kind's reference, never by an import statement."""
    pages = _pages_modules()
    assert pages and pages <= set(MODULES)
    assert sorted(m for m, names in GRAPH.items() for name in names if _ours(name) in pages) == []


def _string_keyed_extensions(path: Path) -> list[str]:
    """`….extensions["zolve…"]` and `….extensions.get("zolve…")` in a module's code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        target = node.value if isinstance(node, ast.Subscript) else None
        key = node.slice if isinstance(node, ast.Subscript) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            target, key = node.func.value, node.args[0]
        is_extensions = isinstance(target, ast.Attribute) and target.attr == "extensions"
        if is_extensions and isinstance(key, ast.Constant) and str(key.value).startswith("zolve"):
            found.append(f"{path}:{node.lineno}")
    return found


def test_the_app_holds_one_typed_extension_not_string_keys(tmp_path: Path) -> None:
    """What the app holds for its requests is api.extension.Zolve, reached with zolve(); string-keyed
    `app.extensions["zolve.…"]` entries (a service locator nobody type-checks) are gone."""
    extension = ROOT / "api" / "extension.py"
    found = [hit for path in MODULES.values() if path != extension for hit in _string_keyed_extensions(path)]
    assert found == []
    probe = _write(tmp_path / "probe.py", 'app.extensions["zolve.db"]\napp.extensions.get("zolve.limiter")\n')
    assert len(_string_keyed_extensions(probe)) == 2, "the check finds both forms"


#: what reading HTTP off a socket looks like: the API's HTTP is granian's (hyper's parser), never ours
_STREAM_CALLS = {"readuntil", "readexactly", "start_server", "open_connection", "open_unix_connection"}


def test_no_module_of_the_product_frames_http_itself() -> None:
    """Issue 54: a hand-written HTTP/1.1 front (its own request lines, headers and chunks) let one client
    answer another's request. No module reads a stream's lines or frames (CRLF bytes, asyncio's stream
    readers and servers): zolve.edge sees requests only as granian parsed them."""
    found = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            crlf = isinstance(node, ast.Constant) and isinstance(node.value, bytes) and b"\r\n" in node.value
            if crlf:
                found.append(f"{name}:{node.lineno} CRLF bytes")
            elif isinstance(node, ast.Attribute) and node.attr in _STREAM_CALLS:
                found.append(f"{name}:{node.lineno} {node.attr}")
    assert found == []
