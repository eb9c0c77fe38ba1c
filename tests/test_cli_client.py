"""The client commands (`zolve submit --wait`, `wait`, `export`) run as subprocesses against the real API
behind a threaded HTTP server, with the real Celery worker, PostgreSQL and Redis behind it."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import select
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from werkzeug.serving import make_server
from zolve_client import Client, NoRows, ProgressReporter, describe_progress

from tests.support import QuietHandler, installed_popen, serving
from tests.test_cli import zolve

#: a standard enumeration that leaves few boards: Planet X in sector 1, a comet in sector 2
FEW_BOARDS = {
    "mode": "standard",
    "constraints": [
        {"sector": 1, "object": "planet_x", "present": True},
        {"sector": 2, "object": "comet", "present": True},
    ],
}
#: a progress line as the plain (not a terminal) reporter prints it
PROGRESS_LINE = re.compile(
    r"^\[ *\d+ s\] job [0-9a-f]{8} running · (\d+)/(\d+) shards · ([\d,]+) boards · [\d,.]+ boards/s"
)


@pytest.fixture(scope="module")
def live_url(app, worker) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="cli-live-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def cli_env(live_url: str, make_key: Callable[..., dict[str, str]]) -> dict[str, str]:
    key = make_key()["Authorization"].split()[1]
    return {**os.environ, "ZOLVE_URL": live_url, "ZOLVE_API_KEY": key}


def _all_boards(url: str, env: dict[str, str], job_id: str) -> list[dict]:
    """Every board of a job through GET /jobs/{id}/boards, page by page."""
    headers = {"Authorization": f"Bearer {env['ZOLVE_API_KEY']}"}
    boards, params = [], {"limit": 1000}
    while True:
        page = requests.get(f"{url}/jobs/{job_id}/boards", params=params, headers=headers, timeout=30).json()
        boards += page["items"]
        if page.get("next_cursor") is None:
            return boards
        params["cursor"] = page["next_cursor"]


def test_export_writes_every_board_as_ndjson_and_csv(live_url: str, cli_env: dict, tmp_path: Path) -> None:
    submitted = zolve(
        "submit", "planetx.enumerate", "--params", json.dumps(FEW_BOARDS), "--wait", "--json", env=cli_env
    )
    assert submitted.returncode == 0, submitted.stderr
    job = json.loads(submitted.stdout)
    assert job["state"] == "succeeded", job
    count = job["result"]["count"]
    expected = _all_boards(live_url, cli_env, job["id"])
    assert 0 < count == len(expected) < 4446
    assert all(board["board"][0] == "X" and board["board"][1] == "C" for board in expected)

    ndjson = zolve("export", job["id"], "--format", "ndjson", env=cli_env)
    assert ndjson.returncode == 0, ndjson.stderr
    assert [json.loads(line) for line in ndjson.stdout.splitlines()] == expected
    into_file = tmp_path / "boards.ndjson"
    ndjson_file = zolve("export", job["id"], "--format", "ndjson", "-o", str(into_file), env=cli_env)
    assert ndjson_file.returncode == 0 and ndjson_file.stdout == "", ndjson_file.stderr
    assert into_file.read_text() == ndjson.stdout

    as_csv = zolve("export", job["id"], "--format", "csv", env=cli_env)
    assert as_csv.returncode == 0, as_csv.stderr
    rows = list(csv.DictReader(as_csv.stdout.splitlines()))
    assert [{"code": int(row["code"]), "board": row["board"]} for row in rows] == expected
    csv_path = tmp_path / "boards.csv"
    csv_file = zolve("export", job["id"], "-o", str(csv_path), env=cli_env)
    assert csv_file.returncode == 0 and csv_file.stdout == "", csv_file.stderr
    assert csv_path.read_text() == as_csv.stdout and csv_path.read_text().startswith("code,board\n")


def _progress_lines(stderr: str) -> list[tuple[int, int, int]]:
    """(shards done, shards total, boards) of every running progress line."""
    found = [PROGRESS_LINE.match(line) for line in stderr.splitlines()]
    return [(int(m[1]), int(m[2]), int(m[3].replace(",", ""))) for m in found if m]


#: 86 shards: the standard enumeration sharded by its first three sectors
SHARDED = {"mode": "standard", "shard_depth": 3}


def test_submit_wait_shows_progress_on_stderr_and_only_json_on_stdout(cli_env: dict) -> None:
    args = ["submit", "planetx.enumerate", "--params", json.dumps(SHARDED), "--fresh"]
    done = zolve(*args, "--wait", "--json", "--progress-every", "0", env=cli_env)
    assert done.returncode == 0, done.stderr
    job = json.loads(done.stdout)  # the whole of stdout is the final job
    assert job["state"] == "succeeded" and job["result"]["count"] == 4446
    shards = job["progress"]["shards_total"]
    lines = _progress_lines(done.stderr)
    assert lines, f"no progress line while it ran:\n{done.stderr}"
    assert all(
        shards_done <= shards_total == shards and boards <= 4446
        for shards_done, shards_total, boards in lines
    )
    assert [line[0] for line in lines] == sorted(line[0] for line in lines)
    final = done.stderr.splitlines()[-1]
    assert f"succeeded · {shards}/{shards} shards · 4,446 boards · " in final, done.stderr
    assert "ETA" not in final


def test_submit_wait_prints_a_summary_and_jobs_lists_whole_ids_as_tsv(cli_env: dict) -> None:
    done = zolve("submit", "dice", "--params", '{"dice": 3, "faces": 6}', "--fresh", "--wait", env=cli_env)
    assert done.returncode == 0, done.stderr
    first, *rest = done.stdout.splitlines()
    job_id = first.split()[0]
    assert re.fullmatch(r"[0-9a-f-]{36}", job_id) and first.split()[1:3] == ["dice", "succeeded"]
    assert "  wins: 21" in rest and len(done.stdout) < 1000, "a summary, not the whole job"
    listed = zolve("jobs", env=cli_env)  # stdout is a pipe: tab-separated lines, ids whole
    header, *rows = listed.stdout.splitlines()
    assert header.split("\t") == ["id", "kind", "state", "created", "attempts"]
    assert [row.split("\t")[:3] for row in rows] == [[job_id, "dice", "succeeded"]]
    failed = zolve(
        "submit",
        "dice",
        "--params",
        '{"dice": 3, "faces": 20}',
        "--time-limit",
        "0.1",
        "--fresh",
        "--wait",
        env=cli_env,
    )
    assert failed.returncode == 1 and "failed" in failed.stdout.splitlines()[0]
    refused = zolve("submit", "dice", "--params", '{"dice": 1}', env=cli_env)
    assert refused.returncode == 1 and "422" in refused.stderr and '"faces"' in refused.stderr


def test_submit_takes_a_priority_and_a_queue_timeout(cli_env: dict) -> None:
    args = ["submit", "dice", "--params", '{"dice": 3, "faces": 5}', "--fresh"]
    job = json.loads(zolve(*args, "--priority", "7", "--queue-timeout", "600", env=cli_env).stdout)
    assert (job["priority"], job["queue_timeout"]) == (7, 600)
    out_of_range = zolve(*args, "--priority", "101", env=cli_env)
    assert out_of_range.returncode == 2 and "--priority" in out_of_range.stderr


def _held_job(env: dict[str, str], release: Path) -> str:
    """A test.sharded job of two shards whose second runs until `release` exists: a waiter that attaches
    late still sees it running."""
    params = {"keys": ["a", "b"], "held": ["b"], "release": str(release)}
    return json.loads(
        zolve("submit", "test.sharded", "--params", json.dumps(params), "--fresh", env=env).stdout
    )["id"]


def test_wait_shows_the_same_progress_lines(cli_env: dict, tmp_path: Path) -> None:
    release = tmp_path / "release"
    job_id = _held_job(cli_env, release)
    process = installed_popen(
        ["wait", job_id, "--progress-every", "0"], cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    lines = []
    for line in process.stderr:  # EOF when the process ends
        lines.append(line.decode())
        if re.search(r"\] job [0-9a-f]{8} running · 1/2 shards", lines[-1]):
            release.touch()
    printed, _ = process.communicate(timeout=60)  # and its pipes closed
    assert process.returncode == 0, lines
    assert json.loads(printed)["result"]["keys"] == ["a", "b"]
    running = [line for line in lines if re.match(r"^\[ *\d+ s\] job [0-9a-f]{8} running · 1/2 shards", line)]
    assert running and all("ETA" in line for line in running), lines


def test_wait_draws_a_live_line_when_stderr_is_a_terminal(cli_env: dict, tmp_path: Path) -> None:
    release = tmp_path / "release"
    job_id = _held_job(cli_env, release)
    controller, terminal = pty.openpty()
    env = {**cli_env, "TERM": "xterm", "COLUMNS": "160"}
    process = installed_popen(["wait", job_id], env, stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    screen = b""
    while True:  # read the terminal until the process closes it
        ready, _, _ = select.select([controller], [], [], 60)
        assert ready, "the terminal went quiet"
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: every writer is gone
            break
        if not chunk:
            break
        screen += chunk
        if re.search(rb"running \xc2\xb7 1/2 shards", screen):
            release.touch()
    stdout, _ = process.communicate(timeout=60)  # and its pipe closed
    assert process.returncode == 0
    os.close(controller)
    assert json.loads(stdout)["result"]["keys"] == ["a", "b"]
    text = screen.decode(errors="replace")
    assert re.search(r"running · 1/2 shards · ETA \d+ s", text), text[-2000:]
    assert "\x1b[" in text, "a live line redraws itself with terminal control codes"
    assert not re.search(r"\] job [0-9a-f]{8} ", text), "no plain progress lines on a terminal"


def test_progress_lines_name_shards_boards_rate_and_eta_and_drop_rows_a_kind_does_not_store() -> None:
    enumerating = {
        "state": "running",
        "progress": {
            "shards_done": 3,
            "shards_total": 1299,
            "boards": 12345,
            "boards_per_second": 6172.51,
            "eta_seconds": 200.4,
        },
        "links": {"rows": "/jobs/x/boards"},
    }
    assert describe_progress(enumerating) == (
        "running · 3/1,299 shards · 12,345 boards · 6,172.5 boards/s · ETA 3 min 20 s"
    )
    playing = {
        "state": "running",
        "progress": {
            "shards_done": 1,
            "shards_total": 4,
            "rows": 0,
            "rows_per_second": 0.0,
            "eta_seconds": 9,
        },
        "links": {"self": "/jobs/y"},
    }
    assert describe_progress(playing) == "running · 1/4 shards · ETA 9 s"
    planning = {"state": "running", "progress": {"phase": "planning", "depth": 3, "prefixes": 120}}
    assert describe_progress(planning) == "running · planning · depth=3 · prefixes=120"
    assert describe_progress({"state": "queued", "progress": None}) == "queued"


def test_plain_progress_lines_come_on_a_change_of_state_and_otherwise_at_most_every_few_seconds() -> None:
    stream = io.StringIO()  # not a terminal
    job = {"state": "running", "progress": {"phase": "solving"}}
    with ProgressReporter("0123456789abcdef", every=3600, stream=stream) as reporter:
        reporter.update({"state": "queued", "progress": None})
        reporter.update(job)
        reporter.update({**job, "progress": {"phase": "checking"}})  # within the hour: not shown
        reporter.update({"state": "succeeded", "progress": None})
    lines = stream.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "job 01234567 queued",
        "job 01234567 running · solving",
        "job 01234567 succeeded",
    ]


@contextmanager
def _answering(answers: dict[str, tuple[str, bytes, dict[str, str]]]) -> Iterator[tuple[str, list[str]]]:
    """A server on loopback answering GETs from a table {path: (content type, body, headers)}; yields its
    URL and the paths asked for."""
    asked: list[str] = []

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook
            asked.append(self.path)
            content_type, body, headers = answers[self.path]
            self.answer(200, body, {**headers, "Content-Type": content_type})

    with serving(Handler) as url:
        yield url, asked


def test_export_follows_the_jobs_own_link_and_refuses_a_job_without_rows() -> None:
    links = {"self": "/base/jobs/e", "csv": "/base/jobs/e/stars.csv", "ndjson": "/base/jobs/e/stars.ndjson"}
    answers = {
        "/base/jobs/e": ("application/json", json.dumps({"id": "e", "kind": "sky.map", "links": links}), {}),
        "/base/jobs/e/stars.csv": ("text/csv", "code,star\n5,Végä", {"X-Total-Count": "1"}),
        "/base/jobs/d": ("application/json", json.dumps({"id": "d", "kind": "dice", "links": {}}), {}),
    }
    encoded = {path: (kind, body.encode(), headers) for path, (kind, body, headers) in answers.items()}
    with _answering(encoded) as (url, asked):
        client = Client(f"{url}/base/", "key")
        output = io.StringIO()
        assert client.export("e", "csv", output) == 1
        assert output.getvalue() == "code,star\n5,Végä\n", "a last row without its line ending gets one"
        assert asked == ["/base/jobs/e", "/base/jobs/e/stars.csv"]
        with pytest.raises(NoRows, match="stores no rows"):
            client.export("d", "ndjson", io.StringIO())
        assert asked[-1] == "/base/jobs/d"  # nothing but the job was asked for


def test_the_client_sends_lists_as_repeated_parameters_and_leaves_out_none() -> None:
    """As requests did: a list is the parameter repeated, a None is no parameter at all (never "None")."""
    answers = {"/jobs?state=queued&state=running&limit=5": ("application/json", b'{"items": []}', {})}
    with _answering(answers) as (url, asked):
        client = Client(url, "key")
        params = {"state": ["queued", "running"], "kind": None, "limit": 5}
        assert client._json("GET", "jobs", params=params) == {"items": []}
        assert asked == ["/jobs?state=queued&state=running&limit=5"]
