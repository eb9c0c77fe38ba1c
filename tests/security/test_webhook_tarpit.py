"""A webhook receiver that trickles its answer cannot hold a delivery past ZOLVE_WEBHOOK_TIMEOUT (1 s in
TEST_ENV), nor another client's job: the probe's tarpit (`500` with `Content-Length: 30`, then a byte
now and then) held each attempt 60 s with a 5-s timeout, because the timeout bounded each socket read and
the whole body was read (issue 37, item 1). Here the tarpit sends a byte every 0.25 s, faster than the
timeout, through a real worker on the webhook queue beside a solver worker."""

from __future__ import annotations

import select
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from services.messages import QUEUE, WEBHOOK_QUEUE
from store import keys
from tests.support import WorkerProcess, poll_job, private_stack, wait_until

TIMEOUT = 1.0  # TEST_ENV's ZOLVE_WEBHOOK_TIMEOUT
TRICKLE_SECONDS = 0.25
#: the body, or the status line, the tarpit trickles: 30 bytes at 0.25 s would hold a reader 7.5 s
HEAD = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 30\r\n\r\n"


@dataclass
class Tarpit:
    url: str = ""
    #: per path, how long each connection was held: from the request read to the client's close
    held: dict[str, list[float]] = field(default_factory=dict)
    open: int = 0


def _read_request(connection: socket.socket) -> str:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return ""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lengths = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
    length = int(lengths[0].split(b":")[1]) if lengths else 0
    while len(body) < length:
        body += connection.recv(65536)
    return head.split(b" ")[1].decode()


def _trickle(connection: socket.socket, data: bytes) -> None:
    """Send `data` a byte every TRICKLE_SECONDS until the client closes the connection."""
    for byte in data:
        readable, _, _ = select.select([connection], [], [], TRICKLE_SECONDS)
        if readable and not connection.recv(1):
            return
        try:
            connection.sendall(bytes([byte]))
        except OSError:
            return


@contextmanager
def tarpit() -> Iterator[Tarpit]:
    state = Tarpit()
    lock = threading.Lock()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            path = _read_request(self.request)
            started = time.monotonic()
            with lock:
                state.open += 1
            try:
                if path.startswith("/body"):  # the head at once, then the body a byte at a time
                    self.request.sendall(HEAD)
                    _trickle(self.request, b"x" * 30)
                else:  # the status line itself a byte at a time
                    _trickle(self.request, HEAD)
            finally:
                with lock:
                    state.open -= 1
                    state.held.setdefault(path, []).append(time.monotonic() - started)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def test_a_tarpit_receiver_is_cut_off_within_the_timeout(settings, tmp_path) -> None:
    with tarpit() as pit, private_stack(settings, tmp_path / "stack") as stack:
        stack.worker.queues = QUEUE
        sender = WorkerProcess(stack.worker.env, tmp_path / "sender.log", concurrency=1, queues=WEBHOOK_QUEUE)
        try:
            stack.worker.launch()
            sender.launch()
            stack.worker.wait_ready()
            sender.wait_ready()
            jobs = {path: _submit(stack, stack.headers, f"{pit.url}{path}") for path in ("/body", "/head")}
            wait_until(lambda: pit.open, 30, 0.02, "the tarpit to hold a delivery")
            # meanwhile another client's short job runs at once
            with stack.db.session() as session:
                other = {"Authorization": f"Bearer {keys.create_key(session, name='other').key}"}
            started = time.monotonic()
            short = _submit(stack, other, None)
            assert poll_job(stack.client, other, short, 30)["state"] == "succeeded"
            assert time.monotonic() - started < 5, "the short job waited behind the tarpit"
            for path, job_id in jobs.items():
                (delivery,) = wait_until(_settled(stack, job_id), 60, 0.1, f"the delivery to {path}")
                assert delivery["state"] == "failed" and len(delivery["attempts"]) == 3
                assert len(pit.held[path]) == 3, pit.held
                assert max(pit.held[path]) < TIMEOUT + 1, f"{path} held {pit.held[path]} s"
                assert all(a["latency_ms"] < (TIMEOUT + 1) * 1000 for a in delivery["attempts"])
            body, head = (_reasons(stack, jobs[path]) for path in ("/body", "/head"))
            assert body == ["HTTP 500"] * 3 and head == ["timeout"] * 3
        finally:
            sender.stop()


def _submit(stack, headers: dict[str, str], callback_url: str | None) -> str:
    body = {"kind": "dice", "params": {"dice": 3, "faces": 3}, "fresh": True, "callback_url": callback_url}
    answer = stack.client.post("/jobs", json=body, headers=headers)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["id"]


def _deliveries(stack, job_id: str) -> list[dict]:
    return stack.client.get(f"/jobs/{job_id}/deliveries", headers=stack.headers).get_json()["items"]


def _settled(stack, job_id: str):  # type: ignore[no-untyped-def]
    def check() -> list[dict] | None:
        found = _deliveries(stack, job_id)
        return found if found and all(d["state"] != "pending" for d in found) else None

    return check


def _reasons(stack, job_id: str) -> list[str]:
    (delivery,) = _deliveries(stack, job_id)
    return [a["reason"] for a in delivery["attempts"]]
