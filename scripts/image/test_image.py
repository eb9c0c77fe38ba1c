"""`make test-image`: the deployment of docker-compose.yml, run from the image on this machine.

What it runs, all inside one network namespace made here (`zimg<pid>`, nothing on the machine's own
interfaces):
- PostgreSQL and Redis from Debian's packages (this machine reaches no registry, so compose's `postgres:16`
  and `redis:7` cannot be pulled): PostgreSQL with compose's user, password and database (password logins),
  Redis with compose's command;
- every zolve service of docker-compose.yml from the image, with the file's image, command, environment
  (interpolated as compose does), memory limit and stop grace period, in its `depends_on` order: the
  one-shot `migrate`, then `api`, two `worker` containers and `webhooks`. Each container resolves the
  servers' service names (`--add-host postgres:127.0.0.1 ...`), has its service's name as hostname, and
  shares the namespace's loopback (podman `--network ns:...`).

Then it checks, through the API: /ready; one job of every kind GET /kinds names, with its example params
(and a batch); the standard Planet X enumeration with one worker container killed (`podman kill -s KILL`)
while it runs a shard of it: every job succeeds, the count is exactly 4,446 and no board is stored twice
(the DB and the boards pages); a webhook reaches a receiver through the webhooks worker; compose's
healthchecks pass in the containers; the dashboard's login page answers and a login with the admin key
reaches the overview.
Then the Kubernetes manifests of deploy/k8s (section `kube` below).

Overrides for the test, on every zolve container (printed at the start): TEST_ENV. Short leases make the
killed worker's shard run again within seconds instead of compose's 30 s.

Everything it started is removed at the end, whatever happens (containers, pods, processes, the namespace,
files), and the run is bounded (ZOLVE_TEST_IMAGE_TIMEOUT, default 1500 s). Needs root (namespaces, podman,
apt-get for what is missing). Run it as `make test-image` (which builds the image first) or
`.venv/bin/python scripts/image/test_image.py` (`--skip-kube` for the compose part only).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import glob
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import requests
import yaml

T = TypeVar("T")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
COMPOSE = ROOT / "docker-compose.yml"
K8S = ROOT / "deploy" / "k8s"
PODMAN = [str(HERE / "podman.sh")]
LABEL = "zolve-test-image"
CLONE_NEWNET = 0x40000000
NAME_PATTERN = re.compile(r"^zimg(\d+)$")

#: on every zolve container of the test, over compose's environment
TEST_ENV = {
    # a killed worker's shard runs again after its lease: 6 s instead of 30
    "ZOLVE_LEASE_SECONDS": "6",
    "ZOLVE_SWEEP_INTERVAL": "1",
    # a shard message the killed worker had taken but not yet started is lost with it (its row stays
    # queued, no lease to expire) and is sent again after ZOLVE_REQUEUE_AFTER: 15 s instead of 120
    "ZOLVE_REQUEUE_AFTER": "15",
    # the webhook receiver of the test listens on the namespace's loopback
    "ZOLVE_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
}
WORKERS = 2  # `worker` containers (compose: --scale worker=2)
JOBS_TIMEOUT = 300  # every job here takes seconds
STANDARD_BOARDS = 4446


class Failed(Exception):
    pass


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(
    args: list[str], timeout: float = 120, check: bool = True, **kwargs: Any
) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise Failed(f"{shlex.join(args)} exited {done.returncode}: {(done.stderr or done.stdout).strip()}")
    return done


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    return run([*PODMAN, *args], timeout=timeout, check=check)


def wait_until(what: str, probe: Callable[[], T | None], timeout: float, every: float = 0.25) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failed(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


# -- docker-compose.yml ------------------------------------------------------------------------------

VARIABLE = re.compile(r"\$(?:(\$)|\{(\w+)(?:(:?[-?])([^}]*))?\})")


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's variable syntax: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, $$."""
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match) -> str:
        dollar, name, operator, argument = match.groups()
        if dollar:
            return "$"
        current = env.get(name)
        missing = current is None or (current == "" and operator and operator.startswith(":"))
        if operator and operator.endswith("?") and missing:
            raise Failed(f"docker-compose.yml: {name}: {argument}")
        if operator and operator.endswith("-") and missing:
            return argument
        return current or ""

    return VARIABLE.sub(replace, value)


def load_compose(env: dict[str, str]) -> dict[str, Any]:
    # yaml's safe loader resolves the anchors and `<<` merges (x-zolve) as compose does
    return interpolate(yaml.safe_load(COMPOSE.read_text()), env)["services"]


def is_zolve(service: dict[str, Any]) -> bool:
    return "build" in service


def start_order(services: dict[str, Any]) -> list[str]:
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order:
            return
        if name in path:
            raise Failed(f"docker-compose.yml: depends_on cycle through {name}")
        for dependency in services[name].get("depends_on", {}):
            visit(dependency, (*path, name))
        order.append(name)

    for name in services:
        visit(name, ())
    return order


# -- the network namespace ---------------------------------------------------------------------------


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def namespace_pids(name: str) -> list[int]:
    done = run(["ip", "netns", "pids", name], check=False)
    # (the `ip` that listed them is among them when this process is in the namespace: gone by now)
    return [int(pid) for pid in done.stdout.split() if Path(f"/proc/{pid}").exists()]


def kill_namespace(name: str) -> None:
    deadline = time.monotonic() + 15
    while pids := [pid for pid in namespace_pids(name) if pid != os.getpid()]:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            left = {
                pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                for pid in pids
                if Path(f"/proc/{pid}").exists()
            }
            log(f"processes of {name} that would not die: {left}")
            return
        time.sleep(0.1)


def remove_containers(label_value: str) -> None:
    pods = podman("pod", "ps", "-q", "--filter", f"label={LABEL}={label_value}", check=False).stdout.split()
    if pods:
        podman("pod", "rm", "-f", "-t", "0", *pods, timeout=120, check=False)
    found = podman("ps", "-aq", "--filter", f"label={LABEL}={label_value}", check=False).stdout.split()
    if found:
        podman("rm", "-f", "-t", "0", *found, timeout=120, check=False)


def remove_stale() -> None:
    """Namespaces and containers left by a run that was killed before it could clean up."""
    for line in run(["ip", "netns", "list"], check=False).stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        match = NAME_PATTERN.match(name)
        if match is None or alive(int(match.group(1))):
            continue
        log(f"removing {name}, left by an earlier run")
        remove_containers(name)
        kill_namespace(name)
        run(["ip", "netns", "del", name], check=False)
    labels = podman("secret", "inspect", "--format", "{{json .Spec.Labels}}", K8S_SECRET, check=False)
    if labels.returncode == 0:
        match = NAME_PATTERN.match(json.loads(labels.stdout or "{}").get(LABEL) or "")
        if match is not None and not alive(int(match.group(1))):
            podman("secret", "rm", K8S_SECRET, check=False)


def enter_namespace(name: str) -> None:
    """Move this (still single-threaded) process into the namespace: the servers it starts, its HTTP
    client and its webhook receiver are all inside, as the containers are."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {name}")
    finally:
        os.close(fd)


# -- PostgreSQL and Redis from Debian's packages -----------------------------------------------------


class Servers:
    def __init__(self, workdir: Path, postgres_env: dict[str, str], redis_command: list[str]):
        self.workdir = workdir
        self.user = postgres_env.get("POSTGRES_USER", "postgres")
        self.password = postgres_env["POSTGRES_PASSWORD"]
        self.database = postgres_env.get("POSTGRES_DB", self.user)
        self.redis_command = redis_command
        self.processes: list[subprocess.Popen] = []

    @property
    def database_url(self) -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:5432/{self.database}"

    def start(self) -> None:
        self._start_postgres()
        self._start_redis()

    def _spawn(self, args: list[str], log_name: str) -> subprocess.Popen:
        with open(self.workdir / log_name, "ab") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(process)
        return process

    def _start_postgres(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
        if not found:
            raise Failed("PostgreSQL's binaries are missing (Debian package postgresql)")
        bindir = Path(found[-1]).parent
        owner = pwd.getpwnam("postgres")
        pgdir = self.workdir / "postgres"
        pgdir.mkdir()
        (pgdir / "run").mkdir()
        password_file = pgdir / "password"
        password_file.write_text(self.password + "\n")
        for path in (pgdir, pgdir / "run", password_file):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
        run(
            [*as_postgres, str(bindir / "initdb"), "-D", str(pgdir / "data"), "-U", "postgres",
             "--pwfile", str(password_file), "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"],
            timeout=120,
        )  # fmt: skip
        self._spawn(
            [*as_postgres, str(bindir / "postgres"), "-D", str(pgdir / "data"),
             "-c", "listen_addresses=127.0.0.1", "-c", "port=5432",
             "-c", f"unix_socket_directories={pgdir / 'run'}", "-c", "fsync=off"],
            "postgres.log",
        )  # fmt: skip
        self.socket_dir = pgdir / "run"

        def ready() -> bool:
            done = run(["pg_isready", "-q", "-h", str(self.socket_dir), "-p", "5432"], check=False)
            return done.returncode == 0

        wait_until("PostgreSQL", ready, 60)
        quoted_password = self.password.replace("'", "''")
        self.psql(f"CREATE ROLE \"{self.user}\" LOGIN PASSWORD '{quoted_password}'", "postgres")
        self.psql(f'CREATE DATABASE "{self.database}" OWNER "{self.user}"', "postgres")

    def psql(self, sql: str, database: str | None = None) -> str:
        done = run(
            ["psql", "-h", str(self.socket_dir), "-p", "5432", "-U", "postgres",
             "-d", database or self.database, "-v", "ON_ERROR_STOP=1", "-Atc", sql],
        )  # fmt: skip
        return done.stdout.strip()

    def _start_redis(self) -> None:
        self._spawn(
            [*self.redis_command, "--bind", "127.0.0.1", "--port", "6379", "--dir", str(self.workdir),
             "--daemonize", "no"],
            "redis.log",
        )  # fmt: skip

        def ready() -> bool:
            done = run(["redis-cli", "-h", "127.0.0.1", "-p", "6379", "ping"], check=False)
            return done.stdout.strip() == "PONG"

        wait_until("Redis", ready, 30)

    def stop(self) -> None:
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


# -- the webhook receiver ------------------------------------------------------------------------------


class Receiver:
    """Records every POST it gets (path, headers, body) on the namespace's loopback."""

    def __init__(self) -> None:
        received: list[dict[str, Any]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append({"path": self.path, "headers": dict(self.headers), "body": body})
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.received = received
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- the deployment ------------------------------------------------------------------------------------


class Deployment:
    def __init__(self, namespace: str, workdir: Path, services: dict[str, Any]):
        self.namespace = namespace
        self.workdir = workdir
        self.services = services
        self.hosts = [name for name, service in services.items() if not is_zolve(service)]
        self.containers: dict[str, str] = {}  # container name -> service
        self.started_at: dict[str, float] = {}
        postgres = services["postgres"]
        self.servers = Servers(workdir, postgres.get("environment", {}), services["redis"]["command"])
        self.http = requests.Session()
        self.base = "http://127.0.0.1:8000"
        self.key = ""
        self.measured: dict[str, float] = {}

    # containers
    def container_args(self, service_name: str, name: str, detach: bool = True) -> list[str]:
        service = self.services[service_name]
        args = ["run", "--name", name, "--hostname", name, "--label", f"{LABEL}={self.namespace}",
                "--network", f"ns:/run/netns/{self.namespace}"]  # fmt: skip
        if detach:
            args.append("--detach")
        for host in self.hosts:
            args += ["--add-host", f"{host}:127.0.0.1"]
        environment = {**service.get("environment", {}), **TEST_ENV}
        for key, value in environment.items():
            args += ["--env", f"{key}={value}"]
        memory = service.get("deploy", {}).get("resources", {}).get("limits", {}).get("memory")
        if memory:
            args += ["--memory", str(memory)]
        grace = service.get("stop_grace_period")
        if grace:
            args += ["--stop-timeout", str(int(grace.rstrip("s")))]
        return [*args, service["image"], *service["command"]]

    def start(self, service_name: str, index: int = 1) -> str:
        name = f"{service_name}-{index}"
        self.started_at[name] = time.monotonic()
        podman(*self.container_args(service_name, name), timeout=120)
        self.containers[name] = service_name
        log(f"started {name}: {shlex.join(self.services[service_name]['command'])}")
        return name

    def exec_healthcheck(self, name: str) -> subprocess.CompletedProcess:
        test = self.services[self.containers[name]]["healthcheck"]["test"]
        command = ["sh", "-c", test[1]] if test[0] == "CMD-SHELL" else test[1:]
        return podman("exec", name, *command, timeout=60, check=False)

    def one_shot(self, service_name: str, timeout: float = 180) -> None:
        name = self.start(service_name)
        code = podman("wait", name, timeout=timeout).stdout.strip()
        output = podman("logs", name, check=False)
        if code != "0":
            raise Failed(f"{name} exited {code}: {(output.stdout + output.stderr)[-2000:]}")
        log(f"{name} exited 0 ({time.monotonic() - self.started_at[name]:.1f} s)")

    def up(self) -> None:
        self.servers.start()
        log(f"PostgreSQL and Redis up in namespace {self.namespace}")
        for service_name in start_order(self.services):
            service = self.services[service_name]
            if not is_zolve(service):
                continue
            if service.get("restart") == "no":
                self.one_shot(service_name)
            else:
                for index in range(1, (WORKERS if service_name == "worker" else 1) + 1):
                    self.start(service_name, index)

    def logs(self, tail: int = 40) -> str:
        out = []
        for name in self.containers:
            done = podman("logs", "--tail", str(tail), name, check=False)
            out.append(f"--- {name}\n{done.stdout}{done.stderr}")
        for log_name in ("postgres.log", "redis.log"):
            path = self.workdir / log_name
            if path.exists():
                lines = path.read_text(errors="replace").splitlines()[-tail:]
                out.append(f"--- {log_name}\n" + "\n".join(lines))
        return "\n".join(out)

    # the API
    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.http.get(self.base + path, timeout=kwargs.pop("timeout", 30), **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.http.post(self.base + path, timeout=kwargs.pop("timeout", 30), **kwargs)

    def status(self, path: str) -> int:
        try:
            return self.get(path, timeout=5).status_code
        except requests.RequestException:
            return 0

    def wait_ready(self) -> None:
        api_start = self.started_at["api-1"]
        wait_until("/health", lambda: self.status("/health") == 200, 120, 0.1)
        self.measured["api podman run -> /health 200 (s)"] = time.monotonic() - api_start
        wait_until("/ready", lambda: self.status("/ready") == 200, 180, 0.1)
        self.measured["api podman run -> /ready 200 (s)"] = time.monotonic() - api_start
        log("API ready: " + ", ".join(f"{k} {v:.1f}" for k, v in self.measured.items()))

    def create_key(self) -> None:
        """`zolve keys create --admin` in a one-off container of the api service."""
        name = "keys-1"
        args = self.container_args("api", name, detach=False)
        image_at = args.index(self.services["api"]["image"])
        args = [*args[: image_at + 1], "zolve", "keys", "create", "--admin", "--name", "image-test"]
        done = podman(*args[:1], "--rm", *args[1:], timeout=120)
        self.key = done.stdout.strip().splitlines()[-1]
        self.http.headers["Authorization"] = f"Bearer {self.key}"

    def submit(self, kind: str, params: dict[str, Any], **extra: Any) -> str:
        reply = self.post("/jobs", json={"kind": kind, "params": params, **extra})
        if reply.status_code != 202:
            raise Failed(f"POST /jobs {kind}: {reply.status_code} {reply.text}")
        return reply.json()["id"]

    def job(self, job_id: str) -> dict[str, Any]:
        reply = self.get(f"/jobs/{job_id}")
        reply.raise_for_status()
        return reply.json()


# -- the checks ----------------------------------------------------------------------------------------

BATCH = {
    "kind": "leaving_earth.plan",
    "items": [
        {"client_id": "moon", "params": {"origin": "E", "destination": "L"}},
        {"client_id": "mars-orbit", "params": {"origin": "E", "destination": "Mo"}},
    ],
}
FINAL = {"succeeded", "failed", "cancelled"}


def kill_mid_shard(deployment: Deployment, db: psycopg.Connection, job_id: str) -> dict[str, Any] | None:
    """Wait until worker-1 runs a shard of the job, then SIGKILL the container. Which shards it held when
    the kill landed is read afterwards: those still `running` under its lease (a dead worker finishes
    nothing; a shard that ended between the look and the kill is not counted). None: it held none (its
    shards ended before the kill landed, as they can on a loaded machine)."""
    query = (
        "SELECT id, key, lease_owner FROM shards WHERE job_id = %s AND state = 'running' "
        "AND lease_owner LIKE 'worker-1:%%' ORDER BY id"
    )

    def running() -> list[tuple]:
        return db.execute(query, (job_id,)).fetchall()

    seen = wait_until("worker-1 to run a shard of the standard enumeration", running, 120, 0.02)
    podman("kill", "--signal", "KILL", "worker-1", timeout=30)
    killed_at = time.monotonic()
    killed_db = db.execute("SELECT now()").fetchone()[0]
    held = running()
    if not held:
        keys = [row[1] for row in seen]
        log(f"worker-1 ran {keys}, but none of its shards was running when the kill landed")
        return None
    log(f"killed worker-1 (SIGKILL) while it ran shard(s) {[row[1] for row in held]} (lease {held[0][2]})")
    return {"ids": [row[0] for row in held], "keys": [row[1] for row in held], "killed_at": killed_at,
            "killed_db": killed_db}  # fmt: skip


#: standard enumerations a kill of worker-1 may miss (its shards all ended first) before the check fails
KILL_ATTEMPTS = 3


def kill_during_an_enumeration(deployment: Deployment, db: psycopg.Connection) -> tuple[str, dict[str, Any]]:
    """A standard enumeration during which worker-1 was killed mid-shard; after a kill that missed, worker-1
    is started again and a fresh enumeration tried (the one before finishes on the other workers)."""
    for attempt in range(1, KILL_ATTEMPTS + 1):
        standard = deployment.submit("planetx.enumerate", {"mode": "standard"}, fresh=True)
        log(f"standard enumeration {standard} submitted")
        killed = kill_mid_shard(deployment, db, standard)
        if killed is not None:
            return standard, killed
        podman("start", "worker-1", timeout=60)
        wait_until(
            "worker-1 to be ready again",
            lambda attempt=attempt: _ready_lines("worker-1") > attempt,
            120,
            0.5,
        )
    raise Failed(f"worker-1 was killed during {KILL_ATTEMPTS} standard enumerations, never mid-shard")


def _ready_lines(container: str) -> int:
    """How many times the container's worker said it was ready (once a start)."""
    logs = podman("logs", container, timeout=30)
    return (logs.stdout + logs.stderr).count(" ready.")


def stuck_shards(db: psycopg.Connection, job_id: str) -> str:
    """What holds up a sharded job: its unfinished shards, and which of them the broker holds a message
    for in kombu's `unacked` hash (delivered to a worker, never acknowledged: a worker killed after it took
    the message and before it started the shard leaves it there until the visibility timeout)."""
    rows = db.execute(
        "SELECT id, key, state, attempts, lease_owner, round(extract(epoch FROM now() - enqueued_at)) "
        "FROM shards WHERE job_id = %s AND state NOT IN ('succeeded') ORDER BY id",
        (job_id,),
    ).fetchall()
    unacked = set()
    for entry in run(["redis-cli", "-h", "127.0.0.1", "hvals", "unacked"], check=False).stdout.splitlines():
        with contextlib.suppress(ValueError, KeyError, IndexError, TypeError):
            message = json.loads(entry)[0]
            unacked.add(str(json.loads(base64.b64decode(message["body"]))[0][0]))
    described = [
        f"{key} (id {id_}): {state}, attempts {attempts}, lease {owner}, sent {age} s ago"
        + (", its message in the broker's unacked hash" if str(id_) in unacked else "")
        for id_, key, state, attempts, owner, age in rows
    ]
    return f"unfinished shards of the standard enumeration: {described or 'none'}"


def wait_jobs(deployment: Deployment, job_ids: dict[str, str], timeout: float) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    while len(done) < len(job_ids):
        for label, job_id in job_ids.items():
            if label in done:
                continue
            reply = deployment.get(f"/jobs/{job_id}?wait=5", timeout=40)
            reply.raise_for_status()
            job = reply.json()
            if job["state"] in FINAL:
                done[label] = job
                log(f"{label}: {job['state']} (run {job['run_seconds']} s, attempts {job['attempts']})")
        if time.monotonic() > deadline:
            missing = sorted(set(job_ids) - set(done))
            raise Failed(f"jobs not finished after {timeout:.0f} s: {missing}")
    return done


def boards_via_api(deployment: Deployment, job_id: str) -> list[int]:
    codes: list[int] = []
    cursor = None
    while True:
        query = f"/jobs/{job_id}/boards?limit=1000" + (f"&cursor={cursor}" if cursor is not None else "")
        reply = deployment.get(query)
        if reply.status_code != 200:
            raise Failed(f"GET {query}: {reply.status_code} {reply.text[:300]}")
        page = reply.json()
        codes += [item["code"] for item in page["items"]]
        cursor = page.get("next_cursor")
        if cursor is None:
            return codes


def check_dashboard(deployment: Deployment) -> None:
    page = requests.get(deployment.base + "/admin/login", timeout=30)
    if page.status_code != 200 or "<form" not in page.text:
        raise Failed(f"GET /admin/login: {page.status_code} {page.text[:300]}")
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page.text)
    browser = requests.Session()
    browser.cookies.update(page.cookies)
    form = {"key": deployment.key, **({"csrf_token": token.group(1)} if token else {})}
    reply = browser.post(deployment.base + "/admin/login", data=form, allow_redirects=False, timeout=30)
    if reply.status_code not in (302, 303):
        raise Failed(f"POST /admin/login: {reply.status_code} {reply.text[:300]}")
    # several requests: the API runs several processes (granian workers), which must all accept the session
    for _ in range(6):
        overview = browser.get(deployment.base + "/admin/", allow_redirects=False, timeout=30)
        if overview.status_code != 200 or 'action="/admin/logout"' not in overview.text:
            raise Failed(f"GET /admin/ after login: {overview.status_code} {overview.text[:300]}")
    log("dashboard: /admin/login answers 200 with its form; a login reaches the overview (6 of 6)")


def check_compose(deployment: Deployment) -> None:
    deployment.wait_ready()
    examples = jobs_of_every_kind(kinds_of(deployment))
    deployment.create_key()
    db = psycopg.connect(deployment.servers.database_url, autocommit=True)

    standard, killed = kill_during_an_enumeration(deployment, db)

    receiver = Receiver()
    try:
        jobs = {"planetx.enumerate standard": standard}
        for kind, params in examples.items():
            extra = {"callback_url": receiver.url} if kind == "dice" else {}
            jobs[kind] = deployment.submit(kind, params, **extra)
        reply = deployment.post("/batches", json=BATCH)
        if reply.status_code != 202:
            raise Failed(f"POST /batches: {reply.status_code} {reply.text}")
        batch_id = reply.json()["id"]
        log(f"submitted {len(examples)} jobs, one of every kind, and a batch of {len(BATCH['items'])}")

        try:
            finished = wait_jobs(deployment, jobs, JOBS_TIMEOUT)
        except Failed as exc:
            raise Failed(f"{exc}; {stuck_shards(db, standard)}") from exc
        failed = {label: job.get("error") for label, job in finished.items() if job["state"] != "succeeded"}
        if failed:
            raise Failed(f"jobs that did not succeed: {json.dumps(failed)[:3000]}")

        def batch_done() -> dict[str, Any] | None:
            batch = deployment.get(f"/batches/{batch_id}").json()
            return batch if batch.get("done") else None

        batch = wait_until("the batch", batch_done, 300, 0.5)
        states = [item["state"] for item in batch["items"]]
        if states != ["succeeded"] * len(BATCH["items"]):
            raise Failed(f"batch items: {states}")
        log(f"batch {batch_id}: {len(states)} items succeeded")

        # the standard enumeration: exact count, no board twice, the killed shard run again elsewhere
        result = finished["planetx.enumerate standard"]["result"]
        # boards are stored a block of 8-byte codes per shard (row_blocks), merged at finalize; a shard
        # stored twice would count its boards twice in the job's rows_done
        rows, distinct = db.execute(
            "SELECT (SELECT rows_done FROM jobs WHERE id = %s),"
            " (SELECT count(DISTINCT substring(keys FROM n * 8 + 1 FOR 8))"
            "  FROM row_blocks, generate_series(0, count - 1) AS n WHERE job_id = %s)",
            (standard, standard),
        ).fetchone()
        codes = boards_via_api(deployment, standard)
        log(f"standard enumeration: result count {result['count']}, DB rows {rows} ({distinct} distinct), "
            f"boards pages {len(codes)} ({len(set(codes))} distinct)")  # fmt: skip
        if not (result["count"] == rows == distinct == len(codes) == len(set(codes)) == STANDARD_BOARDS):
            raise Failed("the standard enumeration is not exactly 4,446 distinct boards")
        rows = db.execute(
            "SELECT key, state, attempts, finished_at - now() FROM shards WHERE id = ANY(%s)",
            (killed["ids"],),
        ).fetchall()
        if any(state != "succeeded" or attempts < 2 for _, state, attempts, _ in rows):
            raise Failed(f"the killed shards: {rows}")
        rerun = time.monotonic() - killed["killed_at"] + max(row[3] for row in rows).total_seconds()
        deployment.measured["SIGKILL of worker-1 -> its shards stored again (s)"] = rerun
        log(f"the killed shard(s) {killed['keys']} were run again: succeeded, attempts "
            f"{[row[2] for row in rows]}, the last stored {rerun:.1f} s after the kill")  # fmt: skip
        timeline = db.execute(
            "SELECT key, attempts, round(extract(epoch FROM enqueued_at - %s)::numeric, 1), "
            "round(extract(epoch FROM started_at - %s)::numeric, 1), "
            "round(extract(epoch FROM finished_at - %s)::numeric, 1) FROM shards WHERE job_id = %s "
            "ORDER BY finished_at DESC LIMIT 4",
            (killed["killed_db"],) * 3 + (standard,),
        ).fetchall()
        log(
            "the standard enumeration's last shards (key, attempts, enqueued, started, finished; seconds "
            f"after the kill): {timeline}"
        )
        # the webhook: delivered by the webhooks worker to the receiver
        wait_until("the dice job's webhook", lambda: receiver.received, 60, 0.2)
        delivery = receiver.received[0]
        body = json.loads(delivery["body"])
        if body.get("id") != jobs["dice"] and body.get("job", {}).get("id") != jobs["dice"]:
            raise Failed(f"webhook for another job: {delivery['body'][:300]!r}")
        if not any(name.lower() == "webhook-signature" for name in delivery["headers"]):
            raise Failed(f"webhook without a signature: {sorted(delivery['headers'])}")
        log("webhook for the dice job delivered (signed) to the receiver by the webhooks worker")
    finally:
        receiver.close()
        db.close()

    # compose's healthchecks, run in their containers
    for name in deployment.containers:
        if name == "worker-1" or "healthcheck" not in deployment.services[deployment.containers[name]]:
            continue
        done = deployment.exec_healthcheck(name)
        if done.returncode != 0:
            raise Failed(f"{name}'s healthcheck failed: {done.stdout}{done.stderr}")
        log(f"{name}: compose's healthcheck passes ({done.stdout.strip() or 'exit 0'})")
    check_dashboard(deployment)
    state = podman("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", "worker-1").stdout.strip()
    log(f"worker-1 after the kill: {state}")


def jobs_of_every_kind(kinds: list[Any]) -> dict[str, dict[str, Any]]:
    """{kind: its example params} for every kind GET /kinds names: a kind added to the product is
    exercised here with nothing to add, and one without an example fails."""
    missing = [kind.get("name") for kind in kinds if not isinstance(kind.get("example"), dict)]
    if missing or not kinds:
        raise Failed(f"GET /kinds gives no example params for {missing or 'any kind'}")
    return {kind["name"]: kind["example"] for kind in kinds}


def kinds_of(deployment: Deployment) -> list[Any]:
    reply = deployment.get("/kinds")
    reply.raise_for_status()
    body = reply.json()
    return body["kinds"] if isinstance(body, dict) else body


# -- kube: deploy/k8s with `podman kube play` ----------------------------------------------------------

K8S_FILES = ["config.yaml", "migrate-job.yaml", "api.yaml", "worker.yaml", "short-lane.yaml", "webhooks.yaml"]
K8S_SECRET = "zolve"


def check_kube(deployment: Deployment) -> None:
    """The manifests of deploy/k8s on podman, against the same PostgreSQL (a database of their own) and
    Redis (database 1). What podman 4.3 cannot run is said where it is worked around:
    - the Secret is made by hand, as the README says (kubectl create secret there): here a podman secret in
      the form kube play reads for secretKeyRef (a JSON object of base64 values);
    - the migration Job (podman runs no Job) is played as a Pod of the Job's own pod template;
    - every pod shares the namespace's network (pods here get no network of their own), so the API
      Deployment runs 1 replica instead of 2 (two would both bind port 8000), and its container lists no
      `ports` (podman maps them, which it cannot on a shared network);
    - Services (cluster networking) and the KEDA ScaledObject are not run (tests/test_deploy.py validates
      them)."""
    servers = deployment.servers
    namespace = deployment.namespace
    database = f"{servers.database}_k8s"
    servers.psql(f'CREATE DATABASE "{database}" OWNER "{servers.user}"', "postgres")
    values = {
        "DATABASE_URL": f"postgresql://{servers.user}:{servers.password}@127.0.0.1:5432/{database}",
        "REDIS_URL": "redis://127.0.0.1:6379/1",
        "ZOLVE_SECRET_KEY": secrets.token_urlsafe(32),
    }
    if podman("secret", "inspect", K8S_SECRET, check=False).returncode == 0:
        raise Failed(f"a podman secret named {K8S_SECRET} exists already: not replacing it")
    secret_file = deployment.workdir / "secret.json"
    encoded = {key: base64.b64encode(value.encode()).decode() for key, value in values.items()}
    secret_file.write_text(json.dumps(encoded))
    podman("secret", "create", "--label", f"{LABEL}={namespace}", K8S_SECRET, str(secret_file))
    try:
        _play_manifests(deployment)
    finally:
        podman("secret", "rm", K8S_SECRET, check=False)


def _pod_templates(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if document.get("kind") in ("Deployment", "Job"):
        yield document["spec"]["template"]
    elif document.get("kind") == "Pod":
        yield document


def _play(deployment: Deployment, name: str, documents: list[dict[str, Any]]) -> Path:
    for document in documents:
        for template in _pod_templates(document):
            template.setdefault("metadata", {}).setdefault("labels", {})[LABEL] = deployment.namespace
    path = deployment.workdir / name
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    # this process is in the test's namespace: `host` is that namespace (pods take no network path here)
    done = podman("kube", "play", "--network", "host", str(path), timeout=180)
    log(f"podman kube play {name}: {' '.join(done.stdout.split())[:200]}")
    return path


def _play_manifests(deployment: Deployment) -> None:
    manifests = {name: list(yaml.safe_load_all((K8S / name).read_text())) for name in K8S_FILES}
    config = manifests["config.yaml"]
    # the migration Job as a Pod of its own template
    job = manifests["migrate-job.yaml"][0]
    template = job["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": job["metadata"]["name"], **template.get("metadata", {})},
        "spec": template["spec"],
    }
    _play(deployment, "k8s-migrate.yaml", [*config, pod])
    container = f"{pod['metadata']['name']}-{pod['spec']['containers'][0]['name']}"
    code = podman("wait", container, timeout=180).stdout.strip()
    output = podman("logs", container, check=False)
    if code != "0":
        raise Failed(f"the migration Job's container exited {code}: {output.stdout}{output.stderr}")
    log(f"the migration Job's pod ran `zolve migrate`: exit 0 ({output.stdout.strip().splitlines()[-1:]})")

    documents = [*config]
    for name in ("api.yaml", "worker.yaml", "short-lane.yaml", "webhooks.yaml"):
        for document in manifests[name]:
            if document["kind"] == "Deployment" and document["metadata"]["name"] == "zolve-api":
                document["spec"]["replicas"] = 1
                for container in document["spec"]["template"]["spec"]["containers"]:
                    container.pop("ports", None)
            documents.append(document)
    played_at = time.monotonic()
    _play(deployment, "k8s-deployments.yaml", documents)
    wait_until("the API pod's /health (its probes)", lambda: deployment.status("/health") == 200, 120, 0.1)
    deployment.measured["kube play -> /health 200 (s)"] = time.monotonic() - played_at
    wait_until("the API pod's /ready", lambda: deployment.status("/ready") == 200, 180, 0.1)
    deployment.measured["kube play -> /ready 200 (s)"] = time.monotonic() - played_at
    containers = podman("ps", "--format", "{{.Names}}", "--filter", f"label={LABEL}={deployment.namespace}")
    names = sorted(name for name in containers.stdout.split() if not name.endswith("-infra"))
    log(f"pods up: {names}; /ready after {deployment.measured['kube play -> /ready 200 (s)']:.1f} s")
    api = next(name for name in names if name.startswith("zolve-api-"))
    worker = next(name for name in names if name.startswith("zolve-worker-"))
    webhooks = next(name for name in names if name.startswith("zolve-webhooks-"))

    key = podman("exec", api, "zolve", "keys", "create", "--admin", "--name", "k8s-test").stdout.split()[-1]
    deployment.http.headers["Authorization"] = f"Bearer {key}"
    examples = jobs_of_every_kind(kinds_of(deployment))
    jobs = {kind: deployment.submit(kind, examples[kind]) for kind in ("dice", "planetx.enumerate")}
    finished = wait_jobs(deployment, jobs, 300)
    if any(job["state"] != "succeeded" for job in finished.values()):
        raise Failed(f"jobs on the Kubernetes manifests: {json.dumps(finished)[:2000]}")
    for name in (worker, webhooks):
        done = podman("exec", name, "zolve", "healthcheck", "worker", check=False)  # their livenessProbe
        if done.returncode != 0:
            raise Failed(f"{name}: `zolve healthcheck worker` failed: {done.stdout}{done.stderr}")
    for name in (api, worker, webhooks):
        uid = podman("exec", name, "id", "-u").stdout.strip()
        lease = podman("exec", name, "printenv", "ZOLVE_LEASE_SECONDS", check=False).stdout.strip()
        if uid != "1000" or lease != "30":
            raise Failed(f"{name}: uid {uid} (want 1000), ZOLVE_LEASE_SECONDS {lease!r} (the ConfigMap's 30)")
    log(
        "Kubernetes manifests: the jobs succeeded; the workers' livenessProbe command passes; every pod runs "
        "as uid 1000 with the ConfigMap's settings"
    )
    remove_containers(deployment.namespace)


# -- main ----------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-kube", action="store_true", help="run the compose deployment only")
    parser.add_argument("--keep-workdir", action="store_true", help="keep the servers' files and logs")
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="another override for every container"
    )
    options = parser.parse_args()
    TEST_ENV.update(item.split("=", 1) for item in options.env)
    if os.geteuid() != 0:
        print("make test-image needs root (network namespaces, podman)", file=sys.stderr)
        return 2
    started = time.monotonic()
    run([str(HERE / "tools.sh"), "--test"], timeout=900)
    timeout = int(os.environ.get("ZOLVE_TEST_IMAGE_TIMEOUT", "1500"))

    def stop(signum: int, frame: Any) -> None:
        raise TimeoutError(f"make test-image: stopped by signal {signum} (time limit {timeout} s)")

    signal.signal(signal.SIGALRM, stop)
    signal.signal(signal.SIGTERM, stop)
    signal.alarm(timeout)
    remove_stale()
    namespace = f"zimg{os.getpid()}"
    run(["ip", "netns", "add", namespace])
    workdir = Path(tempfile.mkdtemp(prefix="zolve-test-image-"))
    workdir.chmod(0o755)
    deployment = None
    try:
        run(["ip", "-n", namespace, "link", "set", "lo", "up"])
        enter_namespace(namespace)
        env = {
            **os.environ,
            "POSTGRES_PASSWORD": secrets.token_urlsafe(18),
            "ZOLVE_SECRET_KEY": secrets.token_urlsafe(32),
        }
        services = load_compose(env)
        image = next(service["image"] for service in services.values() if is_zolve(service))
        if podman("image", "exists", image, check=False).returncode != 0:
            raise Failed(f"no image {image}: run `make image` first")
        log(f"compose services in start order: {', '.join(start_order(services))}; test overrides {TEST_ENV}")
        deployment = Deployment(namespace, workdir, services)
        deployment.up()
        check_compose(deployment)
        log("compose deployment: every check passed")
        remove_containers(namespace)
        deployment.containers.clear()
        if not options.skip_kube:
            check_kube(deployment)
        for what, seconds in deployment.measured.items():
            log(f"measured: {what} {seconds:.1f}")
        log(f"make test-image passed in {time.monotonic() - started:.0f} s")
        return 0
    except (Failed, TimeoutError, requests.RequestException, psycopg.Error, subprocess.TimeoutExpired) as exc:
        log(f"FAILED: {exc}")
        if deployment is not None:
            print(deployment.logs(), file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with contextlib.suppress(Exception):
            remove_containers(namespace)
        if deployment is not None:
            deployment.servers.stop()
        kill_namespace(namespace)
        run(["ip", "netns", "del", namespace], check=False)
        if options.keep_workdir:
            log(f"files kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        log("cleaned up: containers, servers, namespace")


if __name__ == "__main__":
    sys.exit(main())
