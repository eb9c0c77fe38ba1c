"""A shared service against a few slow clients (issue 65): a private `zolve up` meets one class of slow
but legitimate (or keyless) clients at a time, while a victim on an address and key of its own asks for
`/health`, polls its own job and submits, one request every 0.1 s; prints the victim's p50 / p99 and
failures per request type and class, whether its own event stream opened, the API processes' memory
(after each class, and after a quiet spell at the end), and the 500s and tracebacks in the service's
logs. With `--baseline REV`, the same against that revision (a git worktree) first, in the same run, and
each figure's ratio.

Classes (each `--seconds` long; loopback only, every loop bounded in count and time):
- idle: the victim alone;
- exports: 40 keys x 4 exports of the expert enumeration (1,138,272 boards), each read 64 KB every 4 s;
- bodies: 10 addresses x 600 connections that send a POST's head with `Content-Length: 1000` and no body;
- streams: 4 keys x 16 event streams (`/events`), read as they come;
- never-read: one connection asks for the expert export and never reads; the figure is how long the
  server keeps it after the write deadline (`ZOLVE_RESPONSE_WRITE_SECONDS`, here 5 s).

    .venv/bin/python bench/shared_load.py [--seconds 20] [--baseline REV] [--classes idle,exports,...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import resource
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.trees import measured_in, worktree  # noqa: E402

#: the victim's address; the attackers' are 127.0.1.x (bodies) and 127.0.0.1
VICTIM = "127.0.0.2"
MAX_SECONDS = 120.0
CLASSES = ("idle", "exports", "bodies", "streams", "never-read")
#: the victim's requests
KINDS = ("health", "poll", "submit")
EXPERT = {"kind": "planetx.enumerate", "params": {"mode": "expert"}}
DICE = {"kind": "dice", "params": {"dice": 3, "faces": 6}}
WRITE_SECONDS = 5.0
#: how long the service is left alone after the last class, before its memory is measured once more
QUIET_SECONDS = 30.0


class Victim:
    """One request of each kind every 0.1 s: /health, a poll of its own job, a submit; latency per kind."""

    def __init__(self, port: int, key: str, job_id: str) -> None:
        self.port, self.key, self.job_id = port, key, job_id
        self.latency: dict[str, list[float]] = {"health": [], "poll": [], "submit": []}
        self.failures: dict[str, list[str]] = {"health": [], "poll": [], "submit": []}
        self.stopped = threading.Event()

    def run(self, seconds: float) -> None:
        """Each kind of request in a thread of its own, one every 0.1 s: a slow answer of one kind does not
        delay the others' samples."""
        deadline = time.monotonic() + min(seconds, MAX_SECONDS)
        threads = [threading.Thread(target=self._ask_until, args=(kind, deadline)) for kind in KINDS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _ask_until(self, kind: str, deadline: float) -> None:
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                status = self._ask(kind)
                if status != (202 if kind == "submit" else 200):
                    self.failures[kind].append(str(status))
            except OSError as error:
                self.failures[kind].append(type(error).__name__)
            self.latency[kind].append(time.monotonic() - started)
            time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))

    def _ask(self, kind: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30, source_address=(VICTIM, 0))
        headers = {"Authorization": f"Bearer {self.key}"}
        try:
            if kind == "health":
                conn.request("GET", "/health")
            elif kind == "poll":
                conn.request("GET", f"/jobs/{self.job_id}", headers=headers)
            else:
                body = json.dumps(DICE)
                conn.request("POST", "/jobs", body, {**headers, "Content-Type": "application/json"})
            answer = conn.getresponse()
            answer.read()
            return answer.status
        finally:
            conn.close()

    def stream_opens(self) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30, source_address=(VICTIM, 0))
        try:
            conn.request("GET", "/events", headers={"Authorization": f"Bearer {self.key}"})
            return conn.getresponse().status
        except OSError:
            return 0
        finally:
            conn.close()


# -- the classes: each an asyncio task group that runs until `stop` is set ---------------------------------
async def _head(port: int, source: str, request: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(request)
    await writer.drain()
    return reader, writer


async def slow_exports(port: int, keys: list[str], jobs: dict[str, str], stop: asyncio.Event) -> None:
    async def one(key: str) -> None:
        while not stop.is_set():
            request = (
                f"GET /jobs/{jobs[key]}/boards.csv HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
            )
            try:
                reader, writer = await _head(port, "127.0.0.1", request.encode())
            except OSError:
                await asyncio.sleep(1)
                continue
            try:
                while not stop.is_set():
                    if not await reader.read(65536):
                        break
                    await asyncio.wait_for(stop.wait(), 4)
            except (TimeoutError, OSError):
                pass
            finally:
                writer.close()

    async def run_until_stopped(key: str) -> None:
        with contextlib.suppress(TimeoutError):
            await one(key)

    await asyncio.gather(*(run_until_stopped(key) for key in keys for _ in range(4)))


async def stuck_bodies(port: int, stop: asyncio.Event) -> None:
    head = b"POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"

    async def one(source: str) -> None:
        while not stop.is_set():
            try:
                reader, writer = await _head(port, source, head)
            except OSError:
                await asyncio.sleep(0.5)
                continue
            try:
                await _until(stop, reader.read(65536))  # the server's answer (408, 503) or its close
            finally:
                writer.close()

    await asyncio.gather(*(one(f"127.0.1.{a}") for a in range(1, 11) for _ in range(600)))


async def streams(port: int, keys: list[str], stop: asyncio.Event) -> None:
    async def one(key: str) -> None:
        while not stop.is_set():
            request = f"GET /events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n".encode()
            try:
                reader, writer = await _head(port, "127.0.0.1", request)
            except OSError:
                await asyncio.sleep(0.5)
                continue
            try:
                while not stop.is_set() and await _until(stop, reader.read(65536)):
                    pass
            finally:
                writer.close()

    await asyncio.gather(*(one(key) for key in keys for _ in range(16)))


async def _until(stop: asyncio.Event, read: Any) -> bytes:
    """The read's bytes, or b'' once `stop` is set."""
    reading, stopping = asyncio.ensure_future(read), asyncio.ensure_future(stop.wait())
    done, pending = await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    return reading.result() if reading in done and not reading.exception() else b""


def never_read(port: int, key: str, job_id: str, api_pids: list[int], seconds: float) -> float | None:
    """Seconds from the request until no API process holds the connection any more (None: still held)."""
    import psutil

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind(("127.0.0.1", 0))
    sock.connect(("127.0.0.1", port))
    local = sock.getsockname()
    request = f"GET /jobs/{job_id}/boards.csv HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
    sock.sendall(request.encode())
    started = time.monotonic()
    try:
        time.sleep(1)
        while time.monotonic() - started < seconds:
            held = any(
                conn.raddr and (conn.raddr.ip, conn.raddr.port) == local
                for pid in api_pids
                for conn in psutil.Process(pid).net_connections(kind="tcp")
            )
            if not held:
                return time.monotonic() - started
            time.sleep(0.25)
        return None
    finally:
        sock.close()


def _held_for(port: int, key: str, job_id: str, pids: list[int], seconds: float, out: list) -> None:
    out.append(never_read(port, key, job_id, pids, seconds))


# -- one tree --------------------------------------------------------------------------------------------
def measure(seconds: float, classes: list[str]) -> dict[str, Any]:
    import psutil
    import requests

    from bench.stack import UpStack
    from store import keys as key_store

    env = {
        "ZOLVE_RESPONSE_WRITE_SECONDS": str(WRITE_SECONDS),
        "ZOLVE_RATE_LIMIT": "",
        "ZOLVE_SUBMIT_RATE_LIMIT": "",
    }
    figures: dict[str, Any] = {}
    with UpStack(workers=2, env=env) as stack:
        admin = {"Authorization": f"Bearer {stack.key}"}
        expert = requests.post(f"{stack.url}/jobs", json=EXPERT, headers=admin, timeout=30).json()["id"]
        _wait_final(stack.url, admin, expert, 300)
        with stack.db.session() as session:
            made = [key_store.create_key(session, name=f"load {i}").key for i in range(45)]
        victim_key, attackers = made[0], made[1:]
        copies = {}
        for key in attackers:
            answer = requests.post(f"{stack.url}/jobs", json=EXPERT, headers=_auth(key), timeout=30).json()
            copies[key] = answer["id"]
        victim_job = requests.post(
            f"{stack.url}/jobs", json=DICE, headers=_auth(victim_key), timeout=30
        ).json()["id"]
        assert stack.process is not None
        api_pids = _api_pids(stack.process.pid)
        figures["memory before (MB)"] = _rss(api_pids)
        for name in classes:
            victim = Victim(stack.port, victim_key, victim_job)
            stop_event: dict[str, Any] = {}
            attack = _attack(name, stack.port, attackers, copies, stop_event)
            time.sleep(3 if name != "idle" else 0)  # the attack in place
            stream_status = victim.stream_opens()
            never: list[float | None] = []
            watcher = None
            if name == "never-read":
                args = (stack.port, attackers[0], copies[attackers[0]], api_pids, 60, never)
                watcher = threading.Thread(target=_held_for, args=args)
                watcher.start()
            victim.run(seconds)
            if watcher is not None:
                watcher.join()
            attack()
            row: dict[str, Any] = {"stream": stream_status}
            for kind, latencies in victim.latency.items():
                row[f"{kind} p50 (ms)"] = 1000 * statistics.median(latencies)
                row[f"{kind} p99 (ms)"] = 1000 * _p99(latencies)
                row[f"{kind} samples"] = len(latencies)
                row[f"{kind} failures"] = len(victim.failures[kind])
                row[f"{kind} failed as"] = sorted(set(victim.failures[kind]))
            if name == "never-read":
                row["never-read held (s)"] = never[0] if never else None
            row["memory (MB)"] = _rss(api_pids)
            figures[name] = row
            time.sleep(2)
        time.sleep(QUIET_SECONDS)
        figures["memory after a quiet spell (MB)"] = _rss(api_pids)
        logs = "".join(path.read_text(errors="replace") for path in Path(stack.tmp.name).glob("up.*"))
        figures["500s in the access log"] = sum(1 for line in logs.splitlines() if '" 500 ' in line)
        figures["tracebacks in the logs"] = logs.count("Traceback (most recent call last)")
        first = logs.find("Traceback (most recent call last)")
        figures["first traceback"] = logs[max(0, first - 300) : first + 2500] if first >= 0 else ""
        figures["API processes"] = len(psutil.Process(stack.process.pid).children(recursive=True))
    return figures


def _attack(
    name: str, port: int, attackers: list[str], copies: dict[str, str], out: dict[str, Any]
) -> Callable[[], None]:
    """Start the class's clients on a loop of their own; the returned callable stops them."""
    if name in ("idle", "never-read"):
        return lambda: None
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def run() -> None:
        if name == "exports":
            await slow_exports(port, attackers[:40], copies, stop)
        elif name == "bodies":
            await stuck_bodies(port, stop)
        elif name == "streams":
            await streams(port, attackers[:4], stop)

    thread = threading.Thread(target=loop.run_until_complete, args=(run(),), daemon=True)
    thread.start()

    def halt() -> None:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)

    return halt


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _wait_final(url: str, headers: dict[str, str], job_id: str, seconds: float) -> None:
    import requests

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = requests.get(f"{url}/jobs/{job_id}?wait=10", headers=headers, timeout=30).json()
        if job["state"] in ("succeeded", "failed", "cancelled"):
            assert job["state"] == "succeeded", job
            return
    raise SystemExit(f"job {job_id} did not finish in {seconds} s")


def _api_pids(up_pid: int) -> list[int]:
    import psutil

    api = next(proc for proc in psutil.Process(up_pid).children() if "api" in proc.cmdline())
    # its workers: forked copies of it, or new interpreters (spawned), beside multiprocessing's helpers
    workers = [proc for proc in api.children() if "resource_tracker" not in " ".join(proc.cmdline())]
    return [proc.pid for proc in workers] or [api.pid]


def _rss(pids: list[int]) -> float:
    import psutil

    return sum(psutil.Process(pid).memory_info().rss for pid in pids) / 2**20


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


# -- the run ---------------------------------------------------------------------------------------------
def _in_tree(tree: Path, seconds: float, classes: list[str]) -> dict[str, Any]:
    script = tree / "bench" / "shared_load.py"
    return measured_in(tree, script, ["--measure", "--seconds", str(seconds), "--classes", ",".join(classes)])


def _report(label: str, figures: dict[str, Any], base: dict[str, Any] | None) -> None:
    print(
        f"\n{label}: API memory {figures['memory before (MB)']:.0f} MB before, "
        f"{figures['memory after a quiet spell (MB)']:.0f} MB {QUIET_SECONDS:g} s after the last class; "
        f"500s {figures['500s in the access log']}, tracebacks {figures['tracebacks in the logs']}"
    )
    columns = ["class", "victim's stream", *(f"{kind} p50 / p99 (ms)" for kind in KINDS)]
    columns += ["failures (health, poll, submit)", "API memory (MB)"]
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for name in CLASSES:
        row = figures.get(name)
        if row is None:
            continue
        cells = []
        for kind in KINDS:
            cell = (
                f"{row[f'{kind} p50 (ms)']:.1f} / {row[f'{kind} p99 (ms)']:.1f} (n={row[f'{kind} samples']})"
            )
            if base and name in base:
                cell += f" ({row[f'{kind} p99 (ms)'] / max(base[name][f'{kind} p99 (ms)'], 0.001):.2f}× p99)"
            cells.append(cell)
        failures = ", ".join(
            f"{row[f'{kind} failures']}"
            + (f" {'/'.join(row[f'{kind} failed as'])}" if row[f"{kind} failed as"] else "")
            for kind in KINDS
        )
        extra = f"; held {row['never-read held (s)']}" if name == "never-read" else ""
        memory = f"{row['memory (MB)']:.0f}"
        print(f"| {name}{extra} | {row['stream']} | {' | '.join(cells)} | {failures} | {memory} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--classes", default=",".join(CLASSES))
    parser.add_argument("--baseline", default="", help="a git revision to measure first, in a worktree")
    parser.add_argument("--tracebacks", action="store_true", help="print the first traceback of the logs")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    classes = [name for name in args.classes.split(",") if name]
    unknown = set(classes) - set(CLASSES)
    if unknown:
        raise SystemExit(f"unknown classes: {sorted(unknown)}")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    if args.measure:
        print(json.dumps(measure(min(args.seconds, MAX_SECONDS), classes)))
        return
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()}; {args.seconds:g} s a class")
    base = None
    if args.baseline:
        with (
            tempfile.TemporaryDirectory(prefix="zolve-shared-load-") as tmp,
            worktree(args.baseline, Path(tmp)) as tree,
        ):
            # the baseline tree measured with this bench (it may predate it)
            for name in ("shared_load.py", "trees.py"):
                (tree / "bench" / name).write_text((ROOT / "bench" / name).read_text())
            base = _in_tree(tree, args.seconds, classes)
        _report(f"baseline {args.baseline}", base, None)
        if args.tracebacks and base["first traceback"]:
            print(base["first traceback"])
    current = _in_tree(ROOT, args.seconds, classes)
    _report("this tree", current, base)
    if args.tracebacks and current["first traceback"]:
        print(current["first traceback"])


if __name__ == "__main__":
    main()
