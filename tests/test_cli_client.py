"""The client commands (`zolve submit --wait`, `wait`, `export`) run as subprocesses against the real API
behind a threaded HTTP server, with the real Celery worker, PostgreSQL and Redis behind it."""

from __future__ import annotations

import csv
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from werkzeug.serving import make_server

from tests.test_cli import zolve

#: a standard enumeration that leaves few boards: Planet X in sector 1, a comet in sector 2
FEW_BOARDS = {
    "mode": "standard",
    "constraints": [
        {"sector": 1, "object": "planet_x", "present": True},
        {"sector": 2, "object": "comet", "present": True},
    ],
}


@pytest.fixture(scope="module")
def live_url(app, worker) -> Iterator[str]:  # noqa: ANN001
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
        "submit", "planetx.enumerate", "--params", json.dumps(FEW_BOARDS), "--wait", env=cli_env
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
