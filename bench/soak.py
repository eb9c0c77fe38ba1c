"""Soak: `zolve up` (embedded PostgreSQL and Redis, 2 solver processes) under mixed traffic from 20 client
keys for `--minutes`, while things break; then what was lost.

    .venv/bin/python bench/soak.py [--minutes 20] [--clients 20] [--seed 1] [--zolve PATH]

Each client key submits quick jobs (dice, Mastermind guesses) with a callback URL to a local webhook
receiver, polls them, sends batches, submits slow jobs and cancels them, submits jobs that fail (a time
limit), and keeps its event stream (`GET /events`) open, reconnecting with `Last-Event-ID` (the server ends
a stream every ZOLVE_STREAM_MAX_SECONDS, the client drops it now and then). One client's Planet X
enumeration is exported (boards.csv); an operator retries failed jobs from the dashboard and purges (`zolve
purge`) the jobs of the idle measurement. Meanwhile a pool process is SIGKILLed every tenth of the run,
the stack's own Redis is SIGKILLed (the supervisor starts it again) and a message is deleted from a busy
broker queue.

Checked after the traffic stops (and the stack drains): jobs lost, jobs stuck, events missed or repeated
on any stream against the database, webhooks missing per job run, 5xx; reported: API and worker RSS
before the traffic, after warm-up, at the middle and at the end, and submit and poll latencies against
the idle figures of the same run. Exits 1 when an invariant breaks (memory growth after warm-up over 20%
included, in a run of 5 minutes or more: a shorter one reports it). `--zolve` runs another zolve (e.g.
an installed console script) instead of this checkout's.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import os
import random
import re
import signal
import statistics
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psutil
import requests
from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from zolve_client import parse_events  # noqa: E402

from bench.stack import UpStack, create_key  # noqa: E402
from kinds import KINDS  # noqa: E402
from services.messages import QUEUE, SHORT_QUEUE  # noqa: E402
from store import dashboard  # noqa: E402
from store.models import Batch, BatchItem, Job, JobEvent, WebhookDelivery  # noqa: E402
from tests.support import webhook_receiver  # noqa: E402

FINAL = ("succeeded", "failed", "cancelled")
#: what the stack runs with beside its defaults: loopback webhooks retried soon, a lost message sent again
#: after 20 s (not 120), streams the server ends every 40 s, rate limits far above this traffic
STACK_ENV = {
    "ZOLVE_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
    "ZOLVE_WEBHOOK_BACKOFF": "0.5",
    "ZOLVE_REQUEUE_AFTER": "20",
    "ZOLVE_STREAM_MAX_SECONDS": "40",
    "ZOLVE_RATE_LIMIT": "1000000 per minute",
    "ZOLVE_SUBMIT_RATE_LIMIT": "1000000 per minute",
}
#: the kind's own example: a guess after two rounds of feedback
MASTERMIND = KINDS["mastermind.guess"].example
SLOW = {"kind": "dice", "params": {"dice": 3, "faces": 20}, "time_limit": 30, "fresh": True}
FAILING = {"kind": "dice", "params": {"dice": 3, "faces": 20}, "time_limit": 0.5, "fresh": True}
ENUMERATION = {"kind": "planetx.enumerate", "params": {"mode": "standard"}, "fresh": True, "time_limit": 600}
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
MAX_GROWTH = 0.20
#: memory growth is judged in runs this long or longer: in a shorter one, "after warm-up" comes seconds
#: into the traffic, before the pool processes killed and started again have loaded what their jobs use
MEMORY_JUDGED_MINUTES = 5.0
#: the slowest answers of each kind printed with their times, to set beside the faults' log lines
SLOWEST = 12
#: seconds a client waits between two requests: about 1.7 jobs/s from 20 clients, under half of what the
#: 2 solver processes finish on a 2-core machine (a soak is a load the service keeps up with: more, and
#: the queue only grows)
PAUSE = (5.0, 11.0)
#: seconds between the idle figures and the traffic: `zolve purge --finished-before` (the end of the idle
#: figures + 1 s) then takes only the idle jobs, however long the command takes to start
PURGE_GAP = 5


def quick(rng: random.Random) -> dict:
    if rng.random() < 0.5:
        return {"kind": "mastermind.guess", "params": MASTERMIND, "fresh": True}
    return {"kind": "dice", "params": {"dice": 3, "faces": 4, "max_face": rng.randint(12, 60)}, "fresh": True}


def clock(at) -> str | None:
    return at and f"{at:%H:%M:%S}"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Stats:
    """Every answer the soak got: latencies by name, 5xx, 429s and connection failures."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        #: the slowest answers by name, as (seconds, when it was sent), SLOWEST of each kept
        self.slowest: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.requests = self.server_errors = self.too_many = self.failures = 0
        self.errors_seen: Counter[str] = Counter()

    def add(self, name: str, seconds: float, status: int | None) -> None:
        with self.lock:
            self.requests += 1
            if status is None:
                self.failures += 1
                return
            self.latencies[name].append(seconds)
            slowest, answer = self.slowest[name], (seconds, time.time() - seconds)
            (heapq.heappush if len(slowest) < SLOWEST else heapq.heappushpop)(slowest, answer)
            if status >= 500:
                self.server_errors += 1
                self.errors_seen[f"{name} {status}"] += 1
            elif status == 429:
                self.too_many += 1


class Http:
    """One client's keep-alive session, recording each answer in `stats` under a name."""

    def __init__(self, url: str, key: str | None, stats: Stats):
        self.url, self.stats, self.session = url, stats, requests.Session()
        if key:
            self.session.headers["Authorization"] = f"Bearer {key}"

    def call(self, name: str, method: str, path: str, **kwargs) -> requests.Response | None:
        started = time.perf_counter()
        try:
            response = self.session.request(method, self.url + path, timeout=30, **kwargs)
        except requests.RequestException:
            self.stats.add(name, time.perf_counter() - started, None)
            return None
        self.stats.add(name, time.perf_counter() - started, response.status_code)
        return response

    def submit(self, body: dict, name: str = "submit") -> str | None:
        response = self.call(name, "POST", "/jobs", json=body)
        return response.json()["id"] if response is not None and response.status_code == 202 else None


@dataclass
class Ledger:
    """What the clients made, by key index."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    jobs: dict[str, int] = field(default_factory=dict)
    batches: dict[str, int] = field(default_factory=dict)
    failing: list[str] = field(default_factory=list)
    cancels: int = 0
    retried: set[str] = field(default_factory=set)

    def job(self, job_id: str | None, key: int, failing: bool = False) -> None:
        if job_id:
            with self.lock:
                self.jobs[job_id] = key
                if failing:
                    self.failing.append(job_id)


class Stream:
    """A client's event stream, kept open and resumed with Last-Event-ID: every event id it received."""

    def __init__(self, url: str, key: str, stats: Stats, rng: random.Random, stop: threading.Event):
        self.http = Http(url, key, stats)
        self.rng, self.stop = rng, stop
        self.ids: list[int] = []
        self.connections = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            headers = {"Last-Event-ID": str(self.ids[-1])} if self.ids else {}
            path = "/events" if self.ids else "/events?last_event_id=0"
            started = time.perf_counter()
            try:
                response = self.http.session.get(
                    self.http.url + path, headers=headers, stream=True, timeout=(10, 60)
                )
            except requests.RequestException:
                self.http.stats.add("stream", time.perf_counter() - started, None)
                self.stop.wait(1)
                continue
            self.http.stats.add("stream", time.perf_counter() - started, response.status_code)
            if response.status_code != 200:
                response.close()
                self.stop.wait(1)
                continue
            self.connections += 1
            until = time.monotonic() + self.rng.uniform(10, 60)  # the client drops it, unless the server does

            def lines(response: requests.Response = response, until: float = until):
                for line in response.iter_lines(decode_unicode=True):
                    if self.stop.is_set() or time.monotonic() > until:
                        return
                    yield line

            try:
                for event in parse_events(lines()):
                    self.ids.append(event.id)
            except (requests.RequestException, ValueError):
                pass
            finally:
                response.close()


class Soak:
    def __init__(self, args: argparse.Namespace, stack: UpStack, receiver):
        self.args, self.stack, self.receiver = args, stack, receiver
        self.stats = Stats()
        self.ledger = Ledger()
        self.stop = threading.Event()
        self.streams_stop = threading.Event()
        self.notes: list[str] = []
        self.memory: dict[str, tuple[float, float]] = {}
        self.lost_message: tuple[str, str, float] | None = None
        self.export: tuple[int | None, int | None] = (None, None)
        self.purged: dict[str, int] = {}
        self.faults = Counter()
        rng = random.Random(args.seed)
        self.rngs = [random.Random(rng.random()) for _ in range(args.clients)]
        self.chaos_rng = random.Random(rng.random())
        self.keys = [create_key(stack.db, f"soak client {i:02d}") for i in range(args.clients)]
        self.admin = stack.key

    def log(self, text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)

    # -- the idle figures ---------------------------------------------------------------------------
    def idle(self) -> dict[str, list[float]]:
        idle_key = create_key(self.stack.db, "soak idle").key
        stats = Stats()
        http = Http(self.stack.url, idle_key, stats)
        rng = random.Random(0)
        self.idle_jobs = []
        for _ in range(30):
            job_id = http.submit(quick(rng))
            if job_id is None:
                continue
            self.idle_jobs.append(job_id)
            for _ in range(200):
                response = http.call("poll", "GET", f"/jobs/{job_id}")
                if response is not None and response.ok and response.json()["state"] in FINAL:
                    break
                time.sleep(0.05)
        for _ in range(3):
            for job_id in self.idle_jobs:
                http.call("poll", "GET", f"/jobs/{job_id}")
        self.stats.server_errors += stats.server_errors
        self.stats.requests += stats.requests
        return stats.latencies

    # -- the clients --------------------------------------------------------------------------------
    def client(self, index: int) -> None:
        rng, key = self.rngs[index], self.keys[index].key
        http = Http(self.stack.url, key, self.stats)
        hook = f"{self.receiver.url}/hook"
        mine: list[str] = []
        while not self.stop.is_set():
            roll = rng.random()
            if roll < 0.45:
                job_id = http.submit({**quick(rng), "callback_url": f"{hook}/job"})
                self.ledger.job(job_id, index)
                if job_id:
                    mine.append(job_id)
            elif roll < 0.72 and mine:
                http.call("poll", "GET", f"/jobs/{rng.choice(mine[-20:])}")
            elif roll < 0.80:
                items = [
                    {"client_id": str(n), "params": {"dice": 3, "faces": 4, "max_face": rng.randint(12, 300)}}
                    for n in range(2)
                ]
                body = {"kind": "dice", "items": items, "callback_url": f"{hook}/batch"}
                response = http.call("batch", "POST", "/batches", json=body)
                if response is not None and response.status_code == 202:
                    with self.ledger.lock:
                        self.ledger.batches[response.json()["id"]] = index
            elif roll < 0.85:
                job_id = http.submit({**SLOW, "callback_url": f"{hook}/job"}, "submit slow")
                self.ledger.job(job_id, index)
                if job_id and not self.stop.wait(rng.uniform(0.2, 1.5)):
                    http.call("cancel", "POST", f"/jobs/{job_id}/cancel")
                    with self.ledger.lock:
                        self.ledger.cancels += 1
            elif roll < 0.90:
                job_id = http.submit({**FAILING, "callback_url": f"{hook}/job"}, "submit failing")
                self.ledger.job(job_id, index, failing=True)
            else:
                http.call("list", "GET", "/jobs?limit=20")
            self.stop.wait(rng.uniform(*PAUSE))

    # -- the operator and the faults ----------------------------------------------------------------
    def operator(self, started: float, seconds: float) -> None:
        schedule = [(f, "kill_pool_process") for f in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]
        schedule += [(0.05, "enumerate"), (0.15, "memory_warm"), (0.5, "memory_middle")]
        schedule += [(f, "retry_failed") for f in (0.25, 0.55, 0.85)]
        schedule += [(0.35, "restart_redis"), (0.45, "purge"), (0.62, "lose_message")]
        if seconds >= 600:
            schedule.append((0.75, "restart_redis"))
        for at, action in sorted(schedule):
            if self.stop.wait(max(0.0, started + at * seconds - time.monotonic())):
                return
            try:
                getattr(self, action)()
            except Exception as exc:  # a fault the soak could not cause is reported, not fatal
                self.notes.append(f"{action}: {type(exc).__name__}: {exc}")
                self.log(f"{action} failed: {exc!r}")

    def _children(self) -> dict[str, psutil.Process]:
        """The supervisor's children by role: api, worker (solver), short-lane, webhooks."""
        roles = {}
        for child in psutil.Process(self.stack.process.pid).children():
            try:
                command = child.cmdline()
            except psutil.Error:
                continue
            if "api" in command:
                roles["api"] = child
            elif "worker" in command:
                queues = command[command.index("--queues") + 1] if "--queues" in command else ""
                roles[
                    "webhooks"
                    if "webhooks" in queues
                    else "short-lane"
                    if queues == SHORT_QUEUE
                    else "worker"
                ] = child
        return roles

    def rss(self) -> dict[str, float]:
        """MiB resident: the API's processes, and the workers' (solver, short lane, webhooks, their pools)."""
        totals = {"api": 0.0, "workers": 0.0}
        for role, process in self._children().items():
            for one in [process, *process.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    totals["api" if role == "api" else "workers"] += one.memory_info().rss / 2**20
        return totals

    def memory_warm(self) -> None:
        self.memory["after warm-up"] = self._sample()

    def memory_middle(self) -> None:
        self.memory["middle"] = self._sample()

    def _sample(self) -> tuple[float, float]:
        """The median of three readings a second apart (a pool process may be mid-solve, or just forked)."""
        readings = []
        for n in range(3):
            readings.append(self.rss())
            if n < 2:
                time.sleep(1)
        rss = {role: statistics.median(r[role] for r in readings) for role in ("api", "workers")}
        self.log(f"RSS: API {rss['api']:.0f} MiB, workers {rss['workers']:.0f} MiB")
        return rss["api"], rss["workers"]

    def kill_pool_process(self) -> None:
        roles = self._children()
        role = ("worker", "short-lane", "worker", "webhooks")[self.faults["pool process killed"] % 4]
        pool = roles[role].children() if role in roles else []
        if not pool:
            return
        with self.stack.db.session() as session:
            busy = {w.pid for w in dashboard.workers_alive(session, within=15) if w.running}
        victims = [p for p in pool if p.pid in busy] or pool
        victim = self.chaos_rng.choice(victims)
        os.kill(victim.pid, signal.SIGKILL)
        self.faults["pool process killed"] += 1
        self.log(f"SIGKILL {role} pool process {victim.pid}{' (busy)' if victim.pid in busy else ''}")

    def restart_redis(self) -> None:
        pid = self.stack.redis_pid()
        os.kill(pid, signal.SIGKILL)
        self.log(f"SIGKILL the stack's Redis ({pid})")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                if self.stack.redis_pid() != pid and psutil.pid_exists(self.stack.redis_pid()):
                    self.faults["Redis restarted"] += 1
                    self.log("the supervisor started Redis again")
                    return
            except (OSError, ValueError):
                pass
        raise RuntimeError("Redis was not started again within 60 s")

    def lose_message(self) -> None:
        """Delete a waiting job's message from a broker queue that holds others (a burst keeps it busy)."""
        from kombu import Connection

        burst = [Http(self.stack.url, self.keys[i].key, self.stats) for i in range(4)]
        deadline = time.monotonic() + 60
        with Connection(self.stack.redis_url) as connection:
            client = connection.default_channel.client
            while time.monotonic() < deadline and not self.stop.is_set():
                for index, http in enumerate(burst):
                    for _ in range(4):
                        self.ledger.job(http.submit(quick(self.chaos_rng)), index)
                # the solver queues, and their priority lists (kombu names them QUEUE + sep + priority)
                queues = [
                    name
                    for name in client.scan_iter("zolve*")
                    if name.decode().startswith((QUEUE, SHORT_QUEUE))
                    and "webhooks" not in name.decode()
                    and client.type(name) == b"list"
                ]
                for queue in queues:
                    waiting = client.lrange(queue, 0, -1)
                    if len(waiting) < 2:
                        continue
                    for raw in waiting[1:]:
                        # the message names its task's id and its job's
                        found = next((j for j in UUID.findall(raw.decode()) if j in self.ledger.jobs), None)
                        if found and client.lrem(queue, 1, raw):
                            self.lost_message = (found, queue.decode(errors="replace"), time.time())
                            self.faults["message deleted"] += 1
                            self.log(f"deleted job {found}'s message from {queue!r} ({len(waiting)} waiting)")
                            return
                time.sleep(0.2)
        raise RuntimeError("no busy queue to lose a message from within 60 s")

    def enumerate(self) -> None:
        http = Http(self.stack.url, self.keys[1].key, self.stats)
        job_id = http.submit({**ENUMERATION, "callback_url": f"{self.receiver.url}/hook/job"}, "submit")
        self.ledger.job(job_id, 1)
        threading.Thread(target=self._export, args=(http, job_id), daemon=True).start()

    def _export(self, http: Http, job_id: str) -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            response = http.call("long poll", "GET", f"/jobs/{job_id}?wait=10")
            job = response.json() if response is not None and response.ok else {}
            if job.get("state") in FINAL:
                break
        count = (job.get("result") or {}).get("count")
        response = http.call("export", "GET", f"/jobs/{job_id}/boards.csv")
        rows = len(response.text.splitlines()) - 1 if response is not None and response.ok else None
        self.export = (count, rows)
        self.log(f"Planet X export: {rows} rows, the job counts {count} boards")

    def retry_failed(self) -> None:
        """An operator retries up to 5 failed jobs from the dashboard (session, CSRF form)."""
        with self.ledger.lock:
            candidates = [j for j in self.ledger.failing if j not in self.ledger.retried]
        with self.stack.db.session() as session:
            failed = [
                str(j)
                for j in session.scalars(
                    select(Job.id).where(
                        Job.id.in_([uuid.UUID(c) for c in candidates]), Job.state == "failed"
                    )
                )
            ][:5]
        http = Http(self.stack.url, None, self.stats)
        page = http.call("dashboard", "GET", "/admin/login")
        token = CSRF.search(page.text).group(1)
        http.call("dashboard", "POST", "/admin/login", data={"key": self.admin, "csrf_token": token})
        for job_id in failed:
            page = http.call("dashboard", "GET", f"/admin/jobs/{job_id}/retry")
            token = CSRF.search(page.text).group(1)
            done = http.call("dashboard", "POST", f"/admin/jobs/{job_id}/retry", data={"csrf_token": token})
            if done is not None and done.status_code in (200, 302):
                with self.ledger.lock:
                    self.ledger.retried.add(job_id)
        self.log(f"retried {len(failed)} failed jobs from the dashboard")

    def purge(self) -> None:
        """`zolve purge` of what finished before the traffic began: the idle measurement's jobs."""
        cutoff = datetime.fromtimestamp(self.idle_ended + 1, UTC).isoformat()
        done = self.stack.command("purge", "--finished-before", cutoff)
        said = f"{done.stdout.strip()} {done.stderr.strip()[-300:]}"
        self.log(f"zolve purge --finished-before {cutoff}: {said}")
        with self.stack.db.session() as session:
            left = session.scalar(
                select(func.count()).where(Job.id.in_([uuid.UUID(j) for j in self.idle_jobs]))
            )
        self.purged = {"exit": done.returncode, "idle": len(self.idle_jobs), "left": left}

    # -- the run ------------------------------------------------------------------------------------
    def run(self) -> int:
        seconds = self.args.minutes * 60
        self.streams = [
            Stream(self.stack.url, k.key, self.stats, self.rngs[i], self.streams_stop)
            for i, k in enumerate(self.keys)
        ]
        for stream in self.streams:
            stream.thread.start()
        self.memory["before traffic"] = self._sample()
        self.log("idle figures: 30 quick jobs one after another, their polls")
        idle = self.idle()
        # the purge takes what finished before the traffic (the idle jobs, nothing else): a quiet gap
        self.idle_ended = time.time()
        time.sleep(PURGE_GAP)
        self.log(f"traffic: {self.args.clients} clients for {self.args.minutes:g} min")
        started = time.monotonic()
        clients = [
            threading.Thread(target=self.client, args=(i,), daemon=True) for i in range(self.args.clients)
        ]
        for thread in clients:
            thread.start()
        operator = threading.Thread(target=self.operator, args=(started, seconds), daemon=True)
        operator.start()
        time.sleep(max(0.0, started + seconds - time.monotonic()))
        self.memory["end"] = self._sample()
        self.stop.set()
        for thread in clients:
            thread.join(60)
        operator.join(120)
        self.log("traffic stopped; draining")
        return self.check(idle)

    def _job_ids(self) -> dict[uuid.UUID, int]:
        """Every job the clients made (batches' included), by key index."""
        ids = {uuid.UUID(j): k for j, k in self.ledger.jobs.items()}
        with self.stack.db.session() as session:
            for batch_id, index in self.ledger.batches.items():
                for job_id in session.scalars(
                    select(BatchItem.job_id).where(BatchItem.batch_id == uuid.UUID(batch_id))
                ):
                    if job_id is not None:
                        ids[job_id] = index
        return ids

    def drain(self, ids: dict[uuid.UUID, int], timeout: float) -> list[uuid.UUID]:
        deadline = time.monotonic() + timeout
        while True:
            with self.stack.db.session() as session:
                unfinished = list(
                    session.scalars(select(Job.id).where(Job.id.in_(ids), Job.state.notin_(FINAL)))
                )
                pending = session.scalar(select(func.count()).where(WebhookDelivery.state == "pending"))
            if (not unfinished and not pending) or time.monotonic() > deadline:
                return unfinished
            time.sleep(1)

    def explain(self, stuck: list[uuid.UUID]) -> None:
        """What the stuck jobs' rows and the broker say."""
        from kombu import Connection

        with self.stack.db.session() as session:
            for job in session.scalars(select(Job).where(Job.id.in_(stuck[:15]))):
                history = session.scalars(
                    select(JobEvent.event).where(JobEvent.job_id == job.id).order_by(JobEvent.id)
                )
                print(
                    f"stuck: {job.id} {job.kind} {job.state} owner {job.owner_id} attempts {job.attempts}"
                    f" created {clock(job.created_at)} enqueued {clock(job.enqueued_at)}"
                    f" started {clock(job.started_at)} lease {job.lease_owner}"
                    f" events {list(history)}"
                )
        with Connection(self.stack.redis_url) as connection:
            client = connection.default_channel.client
            for name in client.scan_iter("*"):
                kind = client.type(name).decode()
                size = {"list": client.llen, "hash": client.hlen, "zset": client.zcard}.get(kind)
                print(f"broker: {name!r} {kind} {size(name) if size else ''}")

    def check(self, idle: dict[str, list[float]]) -> int:
        ids = self._job_ids()
        stuck = self.drain(ids, timeout=180)
        with self.stack.db.session() as session:
            present = set(session.scalars(select(Job.id).where(Job.id.in_(ids))))
            jobs = {job.id: job for job in session.scalars(select(Job).where(Job.id.in_(ids)))}
            deliveries = list(session.scalars(select(WebhookDelivery)))
            batches = {str(b.id): b for b in session.scalars(select(Batch))}
        lost = [j for j in ids if j not in present]

        # events: every stream against the database (its key's jobs' events)
        owner_of = {i: k.id for i, k in enumerate(self.keys)}
        expected: dict[int, set[int]] = {}
        with self.stack.db.session() as session:
            for index, owner in owner_of.items():
                expected[index] = set(
                    session.scalars(
                        select(JobEvent.id).join(Job, Job.id == JobEvent.job_id).where(Job.owner_id == owner)
                    )
                )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if all(set(s.ids) >= expected[i] for i, s in enumerate(self.streams)):
                break
            time.sleep(0.5)
        self.streams_stop.set()
        missed = sum(len(expected[i] - set(s.ids)) for i, s in enumerate(self.streams))
        repeated = sum(len(s.ids) - len(set(s.ids)) for s in self.streams)
        received_events = sum(len(s.ids) for s in self.streams)
        reconnects = sum(max(0, s.connections - 1) for s in self.streams)

        # webhooks: one delivery per job run (the first run, and one per retry) that finished, and the
        # receiver got each one
        received = defaultdict(set)
        for hit in self.receiver.received:
            received[hit.headers.get("webhook-id") or hit.headers.get("Webhook-Id")].add(hit.path)
        by_job = defaultdict(dict)
        for delivery in deliveries:
            if delivery.job_id is not None:
                by_job[delivery.job_id][delivery.job_run] = delivery
        missing_hooks, hooks = 0, 0
        for job in jobs.values():
            if job.callback_url is None or job.state not in FINAL:
                continue
            for run in range(job.retries + 1):
                hooks += 1
                delivery = by_job[job.id].get(run)
                if delivery is None or delivery.state != "delivered" or f"msg_{delivery.id}" not in received:
                    missing_hooks += 1
        batch_hooks = [d for d in deliveries if d.batch_id is not None]
        done_batches = [b for b in self.ledger.batches if b in batches]
        missing_batch_hooks = len(done_batches) - sum(
            1 for d in batch_hooks if d.state == "delivered" and f"msg_{d.id}" in received
        )
        duplicates = sum(1 for hit in self.receiver.received) - len(received)

        memory = self.memory
        warm = memory.get("after warm-up", memory["before traffic"])
        growth = {
            role: max(memory[at][n] / warm[n] - 1 for at in ("middle", "end") if at in memory)
            for n, role in enumerate(("api", "workers"))
        }
        lost_message = "not made"
        if self.lost_message:
            job = jobs.get(uuid.UUID(self.lost_message[0]))
            if job is not None and job.finished_at is not None:
                waited = job.finished_at.timestamp() - self.lost_message[2]
                lost_message = f"job {job.id} from {self.lost_message[1]}: {job.state} {waited:.0f} s after"
            else:
                lost_message = f"job {self.lost_message[0]}: {job.state if job else 'gone'}"
        count, rows = self.export
        retried = len(self.ledger.retried)
        states = Counter(job.state for job in jobs.values())

        def ms(values: list[float], q: float) -> float:
            return percentile(values, q) * 1000

        submit = self.stats.latencies["submit"]
        poll = self.stats.latencies["poll"]
        print()
        print(f"## soak: {self.args.minutes:g} min, {self.args.clients} client keys, zolve up --workers 2\n")
        print("| measure | value |\n|---|---|")
        rows_out = [
            ("jobs made", f"{len(ids)} ({', '.join(f'{n} {s}' for s, n in sorted(states.items()))})"),
            (
                "batches / cancels / dashboard retries",
                f"{len(self.ledger.batches)} / {self.ledger.cancels} / {retried}",
            ),
            ("jobs lost", str(len(lost))),
            ("jobs stuck", str(len(stuck))),
            (
                "events missed / repeated",
                f"{missed} / {repeated}",
            ),
            (
                "events received",
                f"{received_events} on {len(self.streams)} streams, {reconnects} reconnections",
            ),
            ("webhooks missing", str(missing_hooks + max(0, missing_batch_hooks))),
            ("webhooks", f"{hooks} job runs, {len(done_batches)} batches; {duplicates} received twice"),
            ("5xx", str(self.stats.server_errors)),
            (
                "requests",
                f"{self.stats.requests} ({self.stats.too_many} 429, {self.stats.failures} no answer)",
            ),
            ("Planet X export", f"{rows} rows of {count} boards"),
            (
                "purge",
                f"{self.purged.get('idle', 0) - self.purged.get('left', 0)} of {self.purged.get('idle', 0)}"
                " idle jobs",
            ),
            ("faults", ", ".join(f"{n} {what}" for what, n in self.faults.items()) or "none"),
            ("lost message", lost_message),
        ]
        for label in ("before traffic", "after warm-up", "middle", "end"):
            if label in memory:
                api, workers = memory[label]
                rows_out.append((f"RSS {label}", f"API {api:.0f} MiB, workers {workers:.0f} MiB"))
        rows_out.append(
            ("RSS growth after warm-up", f"API {growth['api']:+.0%}, workers {growth['workers']:+.0%}")
        )
        for name, values, q in (
            ("submit p50", submit, 0.5),
            ("submit p99", submit, 0.99),
            ("poll p99", poll, 0.99),
        ):
            base = idle.get(name.split()[0], [])
            rows_out.append(
                (
                    name,
                    f"{ms(values, q):.0f} ms (idle {ms(base, q):.0f} ms,"
                    f" {percentile(values, q) / percentile(base, q):.1f}×)",
                )
            )
        for name, value in rows_out:
            print(f"| {name} | {value} |")
        for note in self.notes:
            print(f"note: {note}")
        for name in ("submit", "poll"):
            slow = sorted(self.stats.slowest[name], reverse=True)
            when = ", ".join(
                f"{seconds * 1000:.0f} ms at {time.strftime('%H:%M:%S', time.localtime(at))}"
                for seconds, at in slow
            )
            print(f"slowest {name}s (to set beside the faults' times above): {when}")
        if self.stats.errors_seen:
            print(f"5xx seen: {dict(self.stats.errors_seen)}")
        if lost:
            ledger = {uuid.UUID(j) for j in self.ledger.jobs}
            for job_id in lost[:15]:
                where = "submitted" if job_id in ledger else "a batch item's"
                print(f"lost: {job_id} ({where}, client {ids[job_id]})")
        if stuck:
            self.explain(stuck)
            hold = float(os.environ.get("SOAK_HOLD_ON_STUCK", "0"))  # seconds to look at the stack alive
            if hold:
                self.log(f"holding the stack {hold:.0f} s: supervisor pid {self.stack.process.pid}")
                time.sleep(hold)
        judged = self.args.minutes >= MEMORY_JUDGED_MINUTES
        if not judged:
            print(f"memory growth not judged: a run under {MEMORY_JUDGED_MINUTES:g} minutes")
        broken = [
            name
            for name, bad in (
                ("jobs lost", lost),
                ("jobs stuck", stuck),
                ("events missed", missed),
                ("events repeated", repeated),
                ("webhooks missing", missing_hooks + max(0, missing_batch_hooks)),
                ("5xx", self.stats.server_errors),
                ("export", count is None or rows != count),
                ("purge", self.purged.get("exit") != 0 or self.purged.get("left") != 0),
                ("API memory growth", judged and growth["api"] > MAX_GROWTH),
                ("worker memory growth", judged and growth["workers"] > MAX_GROWTH),
                ("faults not made", self.notes),
            )
            if bad
        ]
        print("\ninvariants held" if not broken else f"\nFAILED: {', '.join(broken)}")
        return 1 if broken else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--zolve", help="the zolve command to run (default: this checkout's)")
    parser.add_argument(
        "--logs", type=Path, help="keep the stack's logs (zolve up's output) in this directory"
    )
    args = parser.parse_args()
    # a SIGTERM (a test's timeout, a kill) stops the stack on the way out like Ctrl-C
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with (
        UpStack(
            workers=2, env=STACK_ENV, zolve=[args.zolve] if args.zolve else None, keep_logs=args.logs
        ) as stack,
        webhook_receiver() as receiver,
    ):
        code = Soak(args, stack, receiver).run()
    sys.exit(code)


if __name__ == "__main__":
    main()
