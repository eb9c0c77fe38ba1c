"""`zolve up` as a supervisor: CLI commands join its servers (never stop or replace them), every child
that dies is restarted and the jobs accepted meanwhile run, `/ready` says what is missing, and CLI commands
on a data directory where `zolve up` never ran migrate it first."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import psutil
import pytest
import requests

from services.messages import SOLVER_QUEUES
from tests import installed
from tests.support import free_port, installed_popen, wait_until
from tests.test_cli import _processes_mentioning, embedded_env, zolve

pytestmark = pytest.mark.integration  # each test runs its own `zolve up`

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


class Up:
    """A `zolve up` on its own data directory, its output in files (pipes could fill and stall it)."""

    def __init__(self, data_dir: Path, key: str | None = None):
        """`key`: a key made before on this data directory (the admin key is printed on the first start
        only)."""
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out, self.err = data_dir.parent / "up.out", data_dir.parent / "up.err"
        with self.out.open("w") as out, self.err.open("w") as err:  # the child writes to copies
            self.process = installed_popen(
                ["up", "--port", str(self.port), "--workers", "1", "--api-workers", "1"],
                embedded_env(data_dir),
                stdout=out,
                stderr=err,
                start_new_session=True,  # a group of its own, as a terminal's foreground job is
            )
        # it prints the key once its API is ready
        wait_until(self._up_or_dead, 180, 0.3, "zolve up to say it is up")
        assert self.process.poll() is None, self.err.read_text()[-3000:]
        self.key = key or self.out.read_text().split("ZOLVE_API_KEY=", 1)[1].split()[0]
        # the command as this one was run: the installed product's zolve, not on PATH here
        more_keys = f"{installed.product().zolve} keys create --data-dir {data_dir.absolute()}"
        assert f"more keys: {more_keys}" in self.err.read_text()
        self.headers = {"Authorization": f"Bearer {self.key}"}

    def _submit(self, attempts: int = 3) -> requests.Response:
        """POST a job as a client does: a 503 with Retry-After is retried after it. After a database
        restart each API process answers one such 503, on the first pooled connection the restart dropped
        (it resets its pool then; no pre-ping), and /ready may have been answered by the other process."""
        for _ in range(attempts - 1):
            job = requests.post(f"{self.url}/jobs", json=DICE, headers=self.headers, timeout=10)
            if job.status_code != 503 or "Retry-After" not in job.headers:
                return job
            time.sleep(float(job.headers["Retry-After"]))
        return requests.post(f"{self.url}/jobs", json=DICE, headers=self.headers, timeout=10)

    def _up_or_dead(self) -> bool:
        return "Ctrl-C stops everything." in self.err.read_text() or self.process.poll() is not None

    def ready(self) -> bool:
        try:
            return requests.get(f"{self.url}/ready", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def redis_pid(self) -> int:
        return int((self.data_dir / "redis" / "redis.pid").read_text())

    def postgres_pid(self) -> int:
        return int((self.data_dir / "postgres" / "postmaster.pid").read_text().split()[0])

    def child(self, word: str, queue: str | None = None) -> psutil.Process | None:
        """The supervisor's live `zolve api` or `zolve worker` child (the one on `queue`: `zolve up` runs a
        worker per queue), if it has one right now."""
        for proc in psutil.Process(self.process.pid).children():
            try:
                args = proc.cmdline()
                if proc.status() == psutil.STATUS_ZOMBIE or word not in args:
                    continue
                if queue is None or args[args.index("--queues") + 1 :][:1] == [queue]:
                    return proc
            except (psutil.Error, ValueError):
                pass
        return None

    def replaced(self, word: str, old: psutil.Process, queue: str | None = None) -> bool:
        new = self.child(word, queue)
        return new is not None and new.pid != old.pid

    def solves_a_job(self, timeout: float = 90) -> None:
        job = self._submit()
        assert job.status_code == 202, job.text
        job_url = f"{self.url}/jobs/{job.json()['id']}"

        def done() -> dict | None:
            try:
                body = requests.get(job_url, params={"wait": 5}, headers=self.headers, timeout=15).json()
            except (requests.RequestException, ValueError):
                return None
            return body if body["state"] in ("succeeded", "failed", "cancelled") else None

        assert wait_until(done, timeout, 0.2, "the job to finish")["state"] == "succeeded"

    def stop(self) -> None:
        """Ctrl-C, as a terminal sends it: SIGINT to the whole process group. Every process stops, and
        quietly (before: two "Exception ignored in atexit callback ... can only join a child process"
        tracebacks from gunicorn's workers, issue 50 item 1)."""
        said_before = self.err.stat().st_size
        # only while it runs: the group of one that ended and was reaped may be another process' by now
        assert self.process.poll() is None, f"zolve up had stopped: {self.err.read_text()[-3000:]}"
        os.killpg(self.process.pid, signal.SIGINT)
        assert self.process.wait(60) == 0
        with self.err.open("rb") as err:
            err.seek(said_before)
            said = err.read().decode(errors="replace")
        assert "Traceback" not in said and "Exception ignored" not in said, said[-3000:]


def test_cli_commands_join_a_running_zolve_up_and_it_restarts_what_dies(outside_tmp: Path) -> None:
    up = Up(outside_tmp / "data")
    try:
        redis_before = up.redis_pid()
        made = zolve("keys", "create", "--name", "beside up", env=embedded_env(up.data_dir))
        assert made.returncode == 0 and made.stdout.strip().startswith("zk_"), made.stderr
        assert f"the zolve up on {up.data_dir.absolute()}" in made.stderr  # whose key it is
        listed = zolve("keys", "list", env=embedded_env(up.data_dir))
        assert "beside up" in listed.stdout, listed.stderr
        assert up.redis_pid() == redis_before and psutil.pid_exists(redis_before), "the CLI replaced Redis"
        up.solves_a_job()

        # Redis dies: /ready says so until the supervisor has it back, and jobs run again
        os.kill(up.redis_pid(), signal.SIGKILL)
        wait_until(lambda: up.redis_pid() != redis_before and up.ready(), 60, 0.2, "Redis to be restarted")
        up.solves_a_job()

        # the worker dies (its whole process group, as an OOM kill might): restarted
        worker = up.child("worker", SOLVER_QUEUES)
        os.killpg(worker.pid, signal.SIGKILL)
        wait_until(lambda: up.replaced("worker", worker, SOLVER_QUEUES), 60, 0.2, "a new solver worker")
        up.solves_a_job()

        # the API dies: restarted on the same port
        api = up.child("api")
        os.killpg(api.pid, signal.SIGKILL)
        wait_until(lambda: up.replaced("api", api) and up.ready(), 60, 0.2, "a new API")
        up.solves_a_job()

        # PostgreSQL dies: restarted, and the workers and the API reconnect
        os.kill(up.postgres_pid(), signal.SIGKILL)
        # its backends outlive the postmaster a moment, and /ready may still find one: first the restart
        wait_until(lambda: "postgresql restarted" in up.err.read_text(), 90, 0.3, "PostgreSQL restarted")
        wait_until(up.ready, 60, 0.3, "the API to find PostgreSQL again")
        up.solves_a_job()
    finally:
        up.stop()
    log = up.err.read_text()
    for name in ("redis", "worker", "api", "postgresql"):
        assert f"{name} died" in log and f"{name} restarted" in log, log[-3000:]
    assert "Traceback" not in log, "the terminal shows what the supervisor did, not what its children said"


def test_keys_create_on_a_data_dir_where_zolve_up_never_ran_migrates_it_first(outside_tmp: Path) -> None:
    env = embedded_env(outside_tmp / "fresh")
    made = zolve("keys", "create", env=env)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip().startswith("zk_") and "Traceback" not in made.stderr
    # before, nothing said whose database the key was for: one made on the wrong data directory was
    # refused by the running service (401) with no hint why (issue 50, item 4)
    assert f"no zolve up runs on {(outside_tmp / 'fresh').absolute()}" in made.stderr, made.stderr
    assert "cli" in zolve("keys", "list", env=env).stdout


def test_what_a_killed_zolve_up_started_stops_and_the_next_one_leaves_nothing(outside_tmp: Path) -> None:
    """kill -9 (the OOM killer) of `zolve up` left its API and workers serving the port and taking jobs,
    and of the API's main process its server processes; PostgreSQL outlived the next `zolve up` too (the
    resilience audit). Each now stops once the process that started it is gone."""
    data = str((outside_tmp / "data").absolute())
    try:
        _killed_and_started_again(outside_tmp / "data")
        wait_until(
            lambda: not _processes_mentioning(data), 30, 0.2, "every server of the data directory to stop"
        )
    finally:
        for pid in _processes_mentioning(data):  # what a failure left behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _killed_and_started_again(data_dir: Path) -> None:
    up = Up(data_dir)
    api = up.child("api")
    servers = api.children()
    assert servers, "the API's main process and its server processes"
    api.kill()  # the main process alone: its server processes are left without it
    psutil.wait_procs(servers, timeout=20)
    assert not [p for p in servers if p.is_running() and p.status() != psutil.STATUS_ZOMBIE], servers
    wait_until(lambda: up.replaced("api", api) and up.ready(), 60, 0.2, "a new API on the port")

    started = [
        p for p in psutil.Process(up.process.pid).children(recursive=True) if "redis-server" not in p.name()
    ]
    up.process.kill()
    up.process.wait(10)
    gone, alive = psutil.wait_procs(started, timeout=40)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], alive

    again = Up(data_dir, up.key)  # on the same data directory: the first one's servers go
    again.solves_a_job()
    again.stop()
