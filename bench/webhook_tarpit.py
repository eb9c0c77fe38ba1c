"""A tarpit webhook receiver, and how long a delivery attempt lets it hold the sender (issue 37, item 1).

The tarpit reads the request, then either sends `500` with `Content-Length: 30` and the body a byte at a
time (`/body`), or the status line itself a byte at a time (`/head`), a byte every `--trickle` seconds,
until the client closes the connection. The run sends one attempt to each through services.webhooks.send,
in this process, with ZOLVE_WEBHOOK_TIMEOUT=`--timeout`:

    .venv/bin/python bench/webhook_tarpit.py [--timeout 5] [--trickle 2]

tests/security/test_webhook_tarpit.py uses the same tarpit through a real worker.
"""

from __future__ import annotations

import argparse
import select
import socket
import socketserver
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HEAD = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 30\r\n\r\n"


@dataclass
class Tarpit:
    url: str = ""
    #: per path, how long each connection was held: from the request read to the client's close
    held: dict[str, list[float]] = field(default_factory=dict)
    #: connections held right now
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


def _trickle(connection: socket.socket, data: bytes, every: float) -> None:
    """Send `data` a byte every `every` seconds until the client closes the connection."""
    for byte in data:
        readable, _, _ = select.select([connection], [], [], every)
        try:
            if readable and not connection.recv(1):
                return
            connection.sendall(bytes([byte]))
        except OSError:  # reset, or TLS cut off mid-record
            return


@contextmanager
def tarpit(every: float, tls: ssl.SSLContext | None = None) -> Iterator[Tarpit]:
    """A tarpit on a free loopback port (over TLS with a server context `tls`), for the block's
    duration."""
    state = Tarpit()
    lock = threading.Lock()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            connection = tls.wrap_socket(self.request, server_side=True) if tls else self.request
            try:
                self.serve(connection)
            finally:
                if connection is not self.request:  # the TLS socket took the descriptor over
                    connection.close()

        def serve(self, connection: socket.socket) -> None:
            path = _read_request(connection)
            started = time.monotonic()
            with lock:
                state.open += 1
            try:
                if path.startswith("/body"):
                    connection.sendall(HEAD)
                    _trickle(connection, b"x" * 30, every)
                else:
                    _trickle(connection, HEAD, every)
            finally:
                with lock:
                    state.open -= 1
                    state.held.setdefault(path, []).append(time.monotonic() - started)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=5.0, help="ZOLVE_WEBHOOK_TIMEOUT, seconds")
    parser.add_argument("--trickle", type=float, default=2.0, help="seconds between the tarpit's bytes")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from core.config import Settings, replace
    from services import webhooks
    from store.models import WebhookDelivery

    settings = replace(
        Settings.from_env(), webhook_timeout=args.timeout, webhook_allowed_networks="127.0.0.0/8"
    )
    with tarpit(args.trickle) as pit:
        for path in ("/body", "/head"):
            message = webhooks.Message(WebhookDelivery(id=1, url=pit.url + path), b"{}", "whsec_" + "A" * 44)
            started = time.monotonic()
            attempt = webhooks.send(settings, message)
            print(
                f"{path}: attempt ended after {time.monotonic() - started:.2f} s "
                f"(status {attempt.status_code}, reason {attempt.reason})"
            )
        time.sleep(args.trickle + 0.5)  # the tarpit notices the close at its next byte at the latest
        for path, held in pit.held.items():
            print(f"{path}: the tarpit held the connection {max(held):.2f} s")


if __name__ == "__main__":
    main()
