"""The docs name only what the code has, and nothing of the old README was lost (issue 38, item 3).

README.md and every page under docs/ are scanned for
- settings: every `ZOLVE_…` name (and `DATABASE_URL`, `REDIS_URL`) must be read by the code: a string
  variable of core/config.py's Settings, or a string constant that is exactly that name in the product's
  packages (the command line's envvars, the plugin loader, ...) or in the project's own tools (scripts/,
  bench/);
- endpoints: every HTTP path in backticks (`GET /jobs/{id}/boards`, `POST /batches`, `/admin/login`) and every
  URL of the local service in a code block (`localhost:8000/jobs/$ID/boards?x=7`) must match a route of the
  Flask app with that method: the app is built with unreachable server addresses, which connects to nothing;
  `{id}`, `<rows>`, `$ID` are placeholders for one path segment;
- commands: every `zolve <command> [<subcommand>]` in backticks or in a code block must be in the click
  command tree (zolve.cli.main with the kinds' groups, which it loads from the kinds), and every long option
  written after it (`--data-dir`, `[--wait [--json]]`) one that the command takes;
- make: every `make <target>` in backticks or a code block must be a target of the Makefile;
- the Python client: every `client.method(` (of Client or AsyncClient) and `zolve_client.name` (and
  `from zolve_client import ...`) must be in zolve_client;
- files: every path into the checkout (`tests/api/test_fuzz.py`, `bench/chaos.py`, `deploy/k8s/`) must exist
  (the site's own links are checked by `mkdocs build --strict`).
A fast test: no server is started or reached.
"""

from __future__ import annotations

import ast
import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PRODUCT = (
    *("api", "core", "kinds", "migrations", "pictures", "puzzles", "schemas", "services", "store", "workers"),
    "zolve",
)
TOOLS = ("scripts", "bench")
SETTING = re.compile(r"\b(?:ZOLVE_[A-Z0-9][A-Z0-9_]*[A-Z0-9]|DATABASE_URL|REDIS_URL)\b")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
SPAN = re.compile(r"`([^`]+)`")
ENDPOINT = re.compile(rf"^(?:(?P<method>{'|'.join(METHODS)})\s+)?(?P<path>/[^\s`,;)]*)")
LOCAL_URL = re.compile(r"(?:localhost|127\.0\.0\.1):8000(?P<path>/[^\s'\"`)>]*)")
COMMAND = re.compile(r"(?:^|(?<=[\s/|;&(]))zolve ([a-z][a-z0-9_.-]*)(?: ([a-z][a-z0-9_-]*))?")
#: what a build or a run makes, not the checkout: named in the docs, never there in a fresh clone
GENERATED = {"site", "zolve-data", "test-artifacts", "build", "dist", "docs/openapi.json"}
PLACEHOLDER = re.compile(r"^(?:\{[^}/]*\}|<[^>/]*>|\$[A-Za-z_]+)$")


def doc_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


# -- what the code has ----------------------------------------------------------------------------
@cache
def settings_the_code_reads() -> frozenset[str]:
    """Names that some product or tool module holds as a whole string constant (os.environ.get("ZOLVE_X"),
    envvar="ZOLVE_URL", ...); a name only mentioned inside a longer text (a docstring, a message) is none."""
    names = set()
    for package in (*PRODUCT, *TOOLS):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names.update(SETTING.findall(node.value) if SETTING.fullmatch(node.value) else ())
    for script in (ROOT / "scripts").rglob("*.sh"):  # what a shell script reads: ${ZOLVE_X...}
        names.update(re.findall(r"\$\{(ZOLVE_[A-Z0-9_]+)", script.read_text()))
    return frozenset(names | the_settings_variables())


def the_settings_variables() -> frozenset[str]:
    """The variables of core.config's Settings, one per field (read by pydantic-settings)."""
    from core.config import Settings, variable

    return frozenset(variable(field) for field in Settings.model_fields)


@dataclass(frozen=True)
class Route:
    rule: str
    methods: frozenset[str]

    def segments(self) -> list[str]:
        return _segments(self.rule)

    def matches(self, path: str, method: str | None) -> bool:
        theirs, ours = _segments(path), self.segments()
        if len(theirs) != len(ours) or (method and method not in self.methods):
            return False
        for named, segment in zip(theirs, ours, strict=True):
            if PLACEHOLDER.match(named):
                continue  # a placeholder stands for any one segment: an id, a kind's rows name
            parts = re.split(r"(<[^>]+>)", segment)  # `export.<any(csv, ndjson):fmt>`: converters
            pattern = "".join("[^/]+" if part.startswith("<") else re.escape(part) for part in parts)
            if not re.fullmatch(pattern, named):
                return False
        return True


def _segments(path: str) -> list[str]:
    path = path.split("?", 1)[0].split("#", 1)[0]
    return path.rstrip("/").split("/")[1:] if path != "/" else []


@cache
def app_routes() -> tuple[Route, ...]:
    """The Flask app's url_map, built the way `zolve openapi` builds it: no server is reached."""
    from api.app import create_app
    from core.config import Settings

    app = create_app(
        Settings(
            database_url="postgresql://nobody@127.0.0.1:9/none",
            redis_url="redis://127.0.0.1:9/0",
            rate_limit="",
            submit_rate_limit="",
            secret_key="unused",
        )
    )
    return tuple(Route(rule.rule, frozenset(rule.methods or ())) for rule in app.url_map.iter_rules())


@cache
def command_tree() -> dict[tuple[str, ...], frozenset[str]]:
    """`zolve`'s commands and subcommands by their words (("keys", "create"), ("up",)), each with its long
    options; a group's own entry has no options of its own."""
    from zolve.cli import main

    def options(command: click.Command) -> frozenset[str]:
        names = {"--help"}
        for param in command.params:
            names.update(name for name in (*param.opts, *param.secondary_opts) if name.startswith("--"))
        return frozenset(names)

    tree: dict[tuple[str, ...], frozenset[str]] = {(): options(main)}
    context = click.Context(main)
    for name in main.list_commands(context):
        command = main.get_command(context, name)
        tree[(name,)] = options(command)
        if isinstance(command, click.Group):
            for sub in command.list_commands(click.Context(command)):
                tree[(name, sub)] = options(command.get_command(click.Context(command), sub))
    return tree


# -- what a text names --------------------------------------------------------------------------------
def _code_and_prose(text: str) -> tuple[list[str], str]:
    """The command lines of the fenced blocks (a console block's `$ ` lines only, comments cut), and the
    text without the blocks."""
    lines = []
    for block in FENCE.finditer(text):
        console = block["lang"].strip() == "console"
        for line in re.sub(r"\\\n\s*", " ", block["body"]).splitlines():  # continued lines joined
            if console:
                if not line.lstrip().startswith("$ "):
                    continue
                line = line.lstrip()[2:]
            lines.append(re.sub(r"(^|\s)#.*$", "", line))
    return lines, FENCE.sub("", text)


def named_settings(text: str) -> set[str]:
    return set(SETTING.findall(text))


def named_endpoints(text: str) -> set[tuple[str | None, str]]:
    code, prose = _code_and_prose(text)
    top = {Route(r.rule, r.methods).segments()[0] for r in app_routes() if r.segments()}
    found = set()
    for span in SPAN.findall(prose):
        match = ENDPOINT.match(" ".join(span.split()))
        if match is None:
            continue
        path = match["path"].split("?", 1)[0].rstrip(".:")
        # a bare path is an endpoint when it starts like one of the app's routes (`/srv/zolve` is a directory)
        if match["method"] or (_segments(path)[:1] and _segments(path)[0] in top) or "{" in path:
            found.add((match["method"], path))
    for line in [*code, prose]:
        for match in LOCAL_URL.finditer(line):
            found.add((None, match["path"].split("?", 1)[0]))
    return found


def named_commands(text: str) -> set[tuple[tuple[str, ...], frozenset[str]]]:
    """Each `zolve` command line: its words after `zolve` (the second may be an argument, not a
    subcommand) and the long options written after it, up to the next `zolve` or a pipe."""
    code, prose = _code_and_prose(text)
    found = set()
    for piece in [*code, *(" ".join(span.split()) for span in SPAN.findall(prose))]:
        matches = list(COMMAND.finditer(piece))
        ends = [following.start() for following in matches[1:]] + [len(piece)] * bool(matches)
        for match, end in zip(matches, ends, strict=True):
            rest = piece[match.end() : end].split("|", 1)[0]
            words = tuple(word for word in match.groups() if word)
            found.add((words, frozenset(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", rest))))
    return found


def named_files(text: str) -> set[str]:
    """Paths into the checkout: they start with one of its top-level files or folders (links aside)."""
    tops = {path.name for path in ROOT.iterdir()} - {".git", ".venv", *GENERATED}
    tops = sorted(tops, key=len, reverse=True)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    found = re.findall(rf"(?<![\w/.:~-])((?:{'|'.join(map(re.escape, tops))})/[\w.\-/]*)", text)
    return {path.rstrip(".,:") for path in found} - GENERATED


def named_make_targets(text: str) -> set[str]:
    code, prose = _code_and_prose(text)
    pieces = [*code, *(" ".join(span.split()) for span in SPAN.findall(prose))]
    command = re.compile(r"(?:^|(?<=[\s;&(]))make ([a-z][\w.-]*)")
    return {target for piece in pieces for target in command.findall(piece)}


@cache
def make_targets() -> frozenset[str]:
    return frozenset(re.findall(r"^([\w.-]+):(?!=)", (ROOT / "Makefile").read_text(), re.M))


def named_client_names(text: str) -> set[str]:
    """`client.wait(` (a Client method), `zolve_client.verify_signature`, `from zolve_client import A, B`."""
    found = {f"Client.{name}" for name in re.findall(r"(?<![\w.])client\.([a-z_]\w*)\(", text)}
    found |= set(re.findall(r"\bzolve_client\.([A-Za-z_]\w*)", text))
    for names in re.findall(r"from zolve_client import ([\w, ]+)", text):
        found |= {name.strip() for name in names.split(",") if name.strip()}
    return found


def _in_client(name: str) -> bool:
    import zolve_client

    owner, _, attribute = name.rpartition(".")
    if owner:  # `client.` is either client's (`client.aclose()` an AsyncClient's)
        return any(hasattr(client, attribute) for client in (zolve_client.Client, zolve_client.AsyncClient))
    return hasattr(zolve_client, attribute)


def problems(text: str) -> list[str]:
    """What the text names that the code does not have, one line each."""
    found = [f"setting {name}" for name in sorted(named_settings(text) - settings_the_code_reads())]
    found += [f"file {path}" for path in sorted(named_files(text)) if not (ROOT / path).exists()]
    found += [f"make {target}" for target in sorted(named_make_targets(text) - make_targets())]
    found += [f"zolve_client {name}" for name in sorted(named_client_names(text)) if not _in_client(name)]
    routes = app_routes()
    for method, path in sorted(named_endpoints(text), key=str):
        if not any(route.matches(path, method) for route in routes):
            found.append(f"endpoint {method or ''} {path}".replace("  ", " "))
    tree = command_tree()
    for words, options in named_commands(text):
        if words[:1] not in tree:
            found.append(f"command zolve {words[0]}")
            continue
        group = any(len(known) == 2 and known[0] == words[0] for known in tree)
        if group and len(words) == 2 and words not in tree:
            found.append(f"command zolve {' '.join(words)}")
            continue
        command = words if group and len(words) == 2 else words[:1]
        found += [f"option zolve {' '.join(command)} {name}" for name in sorted(options - tree[command])]
    return sorted(set(found))


# -- the tests ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", doc_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_a_page_names_only_settings_endpoints_and_commands_the_code_has(path: Path) -> None:
    assert problems(path.read_text()) == []


def test_every_setting_of_core_config_is_in_the_configuration_table() -> None:
    """And the other way round: Settings reads nothing that docs/operating/configuration.md lacks."""
    table = (ROOT / "docs" / "operating" / "configuration.md").read_text()
    assert len(the_settings_variables()) > 40 and the_settings_variables() - named_settings(table) == set()


def test_the_checker_catches_a_name_the_code_does_not_have() -> None:
    fake = (
        "Set `ZOLVE_NOPE`, then `GET /nope`, `POST /jobs/{id}/nope`, `/jobs/{id}/nope` and run `zolve nope` "
        "or `zolve keys nope`:\n\n```sh\ncurl localhost:8000/jobs/$ID/nope\nzolve planetx nope\n"
        "zolve up [--port 8000] [--nope] | zolve api --workers 2\n```\n(`tests/test_nope.py`, [x](nope.md))\n"
        "```python\nfrom zolve_client import Client, Nope\nclient.nope(1)\nzolve_client.nope_too\n```\n"
        "`make nope`\n"
    )
    assert problems(fake) == [
        "command zolve keys nope",
        "command zolve nope",
        "command zolve planetx nope",
        "endpoint /jobs/$ID/nope",
        "endpoint /jobs/{id}/nope",
        "endpoint GET /nope",
        "endpoint POST /jobs/{id}/nope",
        "file tests/test_nope.py",
        "make nope",
        "option zolve up --nope",
        "setting ZOLVE_NOPE",
        "zolve_client Client.nope",
        "zolve_client Nope",
        "zolve_client nope_too",
    ]


def test_the_checker_knows_real_names_and_methods() -> None:
    real = (
        "`ZOLVE_LEASE_SECONDS`, `DATABASE_URL`, `GET /jobs/{id}/boards?x=7`, "
        "`POST\n/webhooks/secret/rotate`, "
        "`GET /jobs/{id}/<rows>`, `/admin/login`, `GET /admin/jobs/{id}/export.csv`, `zolve keys create "
        "--admin`, `zolve planetx deduce`, `zolve les E L`, `zolve openapi`, `/srv/zolve`, `bench/chaos.py`, "
        "`deploy/k8s/`, `site/`, `docs/openapi.json`, `client.iter_rows(job_id)`, "
        "`zolve_client.verify_signature`, `make up PORT=8123`, `make test-image`\n\n```console\n"
        "$ curl -s localhost:8000/jobs/$ID/boards.csv\nzolve is up at http://127.0.0.1:8000\n```\n"
    )
    assert problems(real) == []
    # the path is there, not the method
    assert problems("`DELETE /jobs/{id}`") == ["endpoint DELETE /jobs/{id}"]


def test_zolve_openapi_writes_the_document_the_app_serves() -> None:
    from click.testing import CliRunner

    from zolve.cli import main

    written = CliRunner().invoke(main, ["openapi"])
    assert written.exit_code == 0, written.output
    assert '"openapi": "3.0.3"' in written.output and '"/jobs/{job_id}/boards"' in written.output


# -- nothing of the old README was lost -----------------------------------------------------------------
#: every heading (##, ###, ####) of README.md at ce58375, before the site, and where it is now: the README or
#: a page that has it as a heading (the same text, at any level), or a page and the heading it was renamed to
#: (`page#new heading`)
OLD_HEADINGS = {
    "The two commands": ("README.md", "docs/tutorial.md"),
    "Install": ("docs/operating/deployment.md",),
    "From a wheel": ("docs/operating/deployment.md",),
    "The container image": ("docs/operating/deployment.md",),
    "docker compose, run from the image (`make test-image`)": ("docs/operating/deployment.md",),
    "Kubernetes, run with `podman kube play`": ("docs/operating/deployment.md",),
    "A curl session": ("README.md", "docs/tutorial.md"),
    "The API": ("docs/api/index.md",),
    "Sharing one service between clients": ("docs/operating/scaling.md",),
    "The `dice` kind": ("docs/kinds/dice.md",),
    "The `planetx.enumerate` kind": ("docs/kinds/planetx.md",),
    "The `planetx.deduce` kind": ("docs/kinds/planetx.md",),
    "The `planetx.simulate` kind": ("docs/kinds/planetx.md",),
    "The `mastermind.guess` and `mastermind.play` kinds": ("docs/kinds/mastermind.md",),
    "The `leaving_earth.plan` kind": ("docs/kinds/leaving-earth.md",),
    "The `taiji.solve` kind": ("docs/kinds/taiji.md",),
    "The `taiji.enumerate` kind": ("docs/kinds/taiji.md",),
    "Clients that are told: event streams, webhooks, the Python client": (
        "docs/api/events-webhooks.md#Event streams and webhooks",
        "docs/api/python-client.md#The Python client (`zolve_client`)",
    ),
    "Event streams (server-sent events)": ("docs/api/events-webhooks.md",),
    "Signed webhooks": ("docs/api/events-webhooks.md",),
    "The Python client (`zolve.client`)": ("docs/api/python-client.md#The Python client (`zolve_client`)",),
    "Admin dashboard": ("docs/dashboard.md",),
    "Pictures and pages for clients": ("docs/dashboard.md",),
    "The command line": ("docs/cli.md",),
    "Security model": ("docs/operating/security.md",),
    "Architecture": ("README.md", "docs/architecture.md"),
    "Adding a kind: `taiji.enumerate`, step by step": ("docs/kinds/adding-a-kind.md",),
    "Failure model, tested": ("docs/operating/failure-model.md",),
    "Running on several machines": ("docs/operating/scaling.md",),
    "Configuration": ("docs/operating/configuration.md",),
    "Benchmarks": ("docs/benchmarks.md",),
    "Development": ("docs/development.md",),
}
HEADING = re.compile(r"^(#{1,6}) +(.+?) *$", re.M)


def headings(text: str, levels: range = range(1, 7)) -> list[str]:
    return [match[2] for match in HEADING.finditer(FENCE.sub("", text)) if len(match[1]) in levels]


def test_the_readme_is_a_newcomers_page() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, f"README.md is {len(lines)} lines; move sections to docs/ pages"


@pytest.mark.parametrize("old", OLD_HEADINGS)
def test_every_old_readme_section_has_a_home(old: str) -> None:
    for home in OLD_HEADINGS[old]:
        page, _, renamed = home.partition("#")
        heading = renamed or old
        assert heading in headings((ROOT / page).read_text()), f"{heading!r} is no heading of {page}"


def test_the_old_headings_are_the_readmes_at_ce58375() -> None:
    """The list above is every heading of README.md as it was (where the history is there to read)."""
    shown = subprocess.run(
        ["git", "show", "ce58375:README.md"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if shown.returncode != 0:
        pytest.skip("this checkout has no commit ce58375 (a shallow clone)")
    assert headings(shown.stdout, range(2, 5)) == list(OLD_HEADINGS)


@pytest.mark.parametrize("doc", ["README.md", "docs/tutorial.md"])
def test_the_first_screen_shown_names_the_newest_migration(doc: str) -> None:
    from alembic.script import ScriptDirectory

    from migrations.runner import alembic_config

    head = ScriptDirectory.from_config(alembic_config("postgresql://unused")).get_current_head()
    shown = re.findall(r"database schema upgraded from nothing to (\w+)", (ROOT / doc).read_text())
    assert shown == [head], f"{doc} shows {shown}; `zolve up` on a new data directory prints {head}"
