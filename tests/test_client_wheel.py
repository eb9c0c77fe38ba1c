"""The light client distribution (client/: `zolve-client`, issue 50) as a client user installs it: its wheel
alone in an empty virtual environment, from a directory outside the checkout. It brings only its own two
dependencies (httpx and tenacity) and what they need, none of the service (Z3, Celery, Flask, the top-level
`api`, `core`, ... packages), and it submits, waits, streams events and verifies a signed webhook against a
real stack, blocking and async; a user's script type-checks against it alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.installed import ROOT, product
from tests.support import ApiServer, DroppingProxy

#: what a client user installs (issue 70): the client, httpx (blocking and async) with what it needs, tenacity
CLIENT_DISTRIBUTIONS = ["anyio", "certifi", "h11", "httpcore", "httpx", "idna", "tenacity", "zolve-client"]
#: and on Pythons before 3.15, anyio's backport of the typing module's newest names
BACKPORTS = ["typing-extensions"] if sys.version_info < (3, 15) else []


def _locked_versions(*names: str) -> str:
    """Constraints pinning `names` to requirements.lock's versions (the ones the service is tested on)."""
    lock = (ROOT / "requirements.lock").read_text()
    return "".join(re.search(rf"^{name}==\S+", lock, re.M)[0] + "\n" for name in names)  # type: ignore[index]


@pytest.fixture(scope="module")
def client_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty virtual environment (no pip, no setuptools) with the client's wheel installed by pip."""
    home = tmp_path_factory.mktemp("client-user")
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    constraints = home / "constraints.txt"
    constraints.write_text(_locked_versions(*CLIENT_DISTRIBUTIONS[:-1], *BACKPORTS))
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    done = subprocess.run(
        [*install, "-c", str(constraints), str(product().client_wheel)],
        capture_output=True,
        text=True,
        cwd=home,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return python


def _run(python: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`code` in the client user's environment, isolated (-I: no PYTHONPATH, no script or working
    directory on sys.path), from a directory outside the checkout."""
    return subprocess.run(
        [str(python), "-I", "-c", code, *args], capture_output=True, text=True, cwd=python.parent, timeout=180
    )


def test_the_client_wheel_installs_httpx_tenacity_and_none_of_the_service(client_python: Path) -> None:
    listed = _run(
        client_python,
        "import importlib.metadata as m, json; "
        "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))",
    )
    assert listed.returncode == 0, listed.stderr
    installed = sorted(re.sub(r"[-_.]+", "-", name) for name in json.loads(listed.stdout))
    assert installed == sorted(CLIENT_DISTRIBUTIONS + BACKPORTS)
    top_level = _run(
        client_python,
        "import pkgutil, sys, json; "
        "ours = [m.name for m in pkgutil.iter_modules() if m.module_finder.path.startswith(sys.prefix)]; "
        "print(json.dumps(sorted(ours)))",
    )
    packages = sorted(name.replace("-", "_") for name in installed)
    assert sorted(json.loads(top_level.stdout)) == packages, "no server package ships"


def test_the_installed_client_imports_without_the_service(client_python: Path) -> None:
    imported = _run(
        client_python,
        "import sys, zolve_client; from zolve_client import Client, JobState, verify_signature; "
        "assert zolve_client.__file__.startswith(sys.prefix), zolve_client.__file__; "
        "import importlib.util as u; "
        "print([n for n in ('z3', 'flask', 'celery', 'requests', 'rich', 'core', 'api') if u.find_spec(n)])",
    )
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "[]"


#: run by the installed client: a job submitted with a webhook to a receiver of its own, waited for, its
#: event stream read, and the delivery checked with the library's verify_signature (and a tampered copy)
CLIENT_USER = r"""
import asyncio, json, sys, threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from zolve_client import AsyncClient, Client, Invalid, verify_signature
from zolve_client.kinds import DICE

url, key = sys.argv[1:3]
received = []
arrived = threading.Event()

class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        received.append((dict(self.headers), body))
        self.send_response(200)
        self.end_headers()
        arrived.set()

    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=server.serve_forever, daemon=True).start()
client = Client(url, key)
try:
    client.submit("dice", {"dice": 1})
except Invalid as refused:
    refusal = refused.errors
job = client.submit(
    "dice", {"dice": 3, "faces": 4}, fresh=True, callback_url=f"http://127.0.0.1:{server.server_port}/hook"
)
done = client.wait(job["id"], timeout=120)
events = [event.event for event in client.events(job["id"])]
secret = client.webhook_secret()
assert arrived.wait(60), "no delivery"
headers, body = received[0]

async def async_user():
    async with AsyncClient(url, key) as client:
        job = await client.submit(DICE, {"dice": 3, "faces": 5}, fresh=True)
        return (await client.wait(job, timeout=120))["state"], [e.event async for e in client.events(job)][-1]
print(json.dumps({
    "refusal": refusal,
    "state": done["state"],
    "optimal": done["result"]["optimal"],
    "events": events,
    "delivered_job": json.loads(body)["id"] == job["id"],
    "verified": verify_signature(secret, headers, body),
    "tampered": verify_signature(secret, headers, body.replace(b"succeeded", b"failed")),
    "async": asyncio.run(async_user()),
}))
"""


def test_the_installed_client_submits_waits_streams_and_verifies_a_webhook(
    client_python: Path, live_api: ApiServer, worker, make_key: Callable[..., dict[str, str]]
) -> None:
    key = make_key()["Authorization"].split()[1]
    ran = _run(client_python, CLIENT_USER, live_api.url, key)
    assert ran.returncode == 0, ran.stderr[-3000:]
    seen = json.loads(ran.stdout)
    assert "params" in seen["refusal"], "a 422 carries its field messages"
    assert seen["state"] == "succeeded" and seen["optimal"] is True
    assert seen["events"][0] == "created" and seen["events"][-1] == "succeeded"
    assert seen["delivered_job"] and seen["verified"] is True and seen["tampered"] is False
    assert seen["async"] == ["succeeded", "succeeded"], "the async client waits and streams alike"


#: run by the installed client: one submit through each of two proxies that drop the first answer, one
#: blocking and one async; each prints the job it got
DROPPED_USER = r"""
import asyncio, json, sys
from zolve_client import AsyncClient, Client
from zolve_client.kinds import DICE

blocking_url, async_url, key = sys.argv[1:4]
with Client(blocking_url, key) as client:
    blocking = client.submit(DICE, {"dice": 3, "faces": 4}, fresh=True)

async def submit():
    async with AsyncClient(async_url, key) as client:
        return await client.submit(DICE, {"dice": 3, "faces": 5}, fresh=True)

print(json.dumps([blocking["id"], asyncio.run(submit())["id"]]))
"""


def test_the_installed_client_retries_a_dropped_submit_and_makes_one_job(
    client_python: Path, live_api: ApiServer, make_key: Callable[..., dict[str, str]]
) -> None:
    key = make_key()["Authorization"].split()[1]
    port = int(live_api.url.rpartition(":")[2])
    proxies = [DroppingProxy(port), DroppingProxy(port)]
    try:
        ran = _run(client_python, DROPPED_USER, proxies[0].url, proxies[1].url, key)
    finally:
        for proxy in proxies:
            proxy.close()
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert all(proxy.dropped.is_set() and proxy.connections == 2 for proxy in proxies), "dropped, retried"
    from zolve_client import Client

    with Client(live_api.url, key) as client:
        made = [job["id"] for job in client.iter_jobs()]
    assert sorted(made) == sorted(json.loads(ran.stdout)), "one job a submit, none twice"


#: a user's script, checked by mypy --strict against the installed client alone (PEP 561: py.typed): a
#: dice job's params and result typed, blocking and async
TYPED_USER = """
from zolve_client import AsyncClient, Client, Job, JobFailed
from zolve_client.kinds import DICE, DiceParams, DiceResult


def dice_wins(url: str, key: str) -> int | None:
    params: DiceParams = {"dice": 3, "faces": 6}
    with Client(url, key, timeout=10) as client:
        job: Job[DiceParams, DiceResult] = client.submit(DICE, params, idempotency_key="once")
        try:
            result: DiceResult = client.result(job, timeout=60)
        except JobFailed as failed:
            return -1 if failed.job["state"] == "cancelled" else -2
        faces: int = job["params"]["faces"]
        wins: int | None = result.get("wins")
        return wins


async def dice_status(url: str, key: str) -> str:
    async with AsyncClient(url, key) as client:
        job = await client.submit(DICE, DiceParams(dice=3, faces=6))
        done = await client.wait(job, timeout=60)
        result = done.get("result")
        return result["status"] if result else done["state"]
"""

#: what the types refuse: a die count as text, a field no dice result has, a job's state it cannot be in
MISTYPED_USER = """
from zolve_client import Client
from zolve_client.kinds import DICE, DiceParams


def mistaken(client: Client) -> None:
    job = client.submit(DICE, DiceParams(dice="3", faces=6))
    client.result(job)["count"]
    assert job["state"] != "finished"
"""


def _mypy_strict(client_python: Path, script: Path) -> subprocess.CompletedProcess[str]:
    """mypy --strict on `script`, reading the client's types from the user's environment alone."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--strict-equality"]
        + ["--python-executable", str(client_python), str(script)],
        capture_output=True,
        text=True,
        cwd=script.parent,
        timeout=300,
    )


@pytest.mark.slow
def test_the_installed_client_is_typed_for_a_users_type_checker(client_python: Path, tmp_path: Path) -> None:
    marker = _run(
        client_python, "import pathlib, zolve_client; print(pathlib.Path(zolve_client.__file__).parent)"
    )
    assert (Path(marker.stdout.strip()) / "py.typed").is_file(), "the wheel ships py.typed"
    script = tmp_path / "user.py"
    script.write_text(TYPED_USER)
    checked = _mypy_strict(client_python, script)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    script.write_text(MISTYPED_USER)
    refused = _mypy_strict(client_python, script)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stdout.count("error:") == 3, refused.stdout
