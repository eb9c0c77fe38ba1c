"""Slow and flooding clients against the API, and meanwhile `/health` asked again and again on fresh
connections by another client; prints its latency percentiles, and first the same for an idle server.

- default: N sockets that send a request's headers (or with --body its body) a byte a second. A socket the
  server closes (its read deadline) is replaced by a new one, so that N stay open throughout.
- --header-flood N: N connections that send, again and again, a head of 51,000 tiny fields (255 KiB).

Loopback only, bounded: at most 1,000 sockets, at most 120 s. The slow or flooding sockets come from
127.0.0.2 (--source): another client than the one asking for `/health`.

    .venv/bin/python bench/slow_clients.py http://127.0.0.1:8000 [--sockets 200] [--seconds 30] [--body]
    .venv/bin/python bench/slow_clients.py http://127.0.0.1:8000 --header-flood 16 [--seconds 30]
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

MAX_SOCKETS = 1000
MAX_SECONDS = 120.0


@dataclass
class SlowClients:
    """Sockets that each send a request's start, then one more byte every `drip` seconds, until stopped."""

    host: str
    port: int
    count: int
    drip: float = 1.0
    body: bool = False  # send whole headers and trickle a promised body instead
    replenish: bool = False  # open a new socket for each one the server closes: keep `count` open
    #: the loopback address they come from (another client than the one that asks for /health: the API
    #: gives each address its share)
    source: str = "127.0.0.1"
    sockets: list[socket.socket] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)
    dripping: threading.Thread | None = None

    def __post_init__(self) -> None:
        if not all(ipaddress.ip_address(address).is_loopback for address in (self.host, self.source)):
            raise ValueError("slow clients are for loopback only")
        self.count = min(self.count, MAX_SOCKETS)

    def start(self) -> SlowClients:
        for _ in range(self.count):
            self._open()
        self.dripping = threading.Thread(target=self._drip, daemon=True)
        self.dripping.start()
        return self

    def _open(self) -> None:
        body_start = b"POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        body_start += b"Content-Length: 100000\r\n\r\n{"
        sock = socket.create_connection((self.host, self.port), timeout=5, source_address=(self.source, 0))
        try:
            sock.sendall(body_start if self.body else b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        except OSError:
            sock.close()
            raise
        self.sockets.append(sock)

    def _drip(self) -> None:
        while not self.stopped.wait(self.drip):
            for sock in list(self.sockets):
                try:
                    sock.send(b"a")
                except OSError:
                    self.sockets.remove(sock)  # the server closed it (its deadline): that is the point
                    sock.close()
                    if self.replenish and not self.stopped.is_set():
                        self._open()

    def open_count(self) -> int:
        return len(self.sockets)

    def stop(self) -> None:
        """Stop dripping, then close every socket: the drip thread drops the ones the server closed, so
        the list is only walked once it has finished."""
        self.stopped.set()
        if self.dripping is not None:
            self.dripping.join()
        for sock in self.sockets:
            sock.close()
        self.sockets.clear()


#: a head of 51,000 tiny fields (255 KiB), as the hostile-client probe of issue 54 sent
FLOOD_HEAD = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"a:b\r\n" * 51_000 + b"\r\n"


@dataclass
class HeaderFlood:
    """`count` connections from `source`, each sending FLOOD_HEAD, reading the answer, and again."""

    host: str
    port: int
    count: int
    source: str = "127.0.0.2"
    answers: dict[bytes, int] = field(default_factory=dict)
    stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> HeaderFlood:
        for _ in range(min(self.count, MAX_SOCKETS)):
            threading.Thread(target=self._flood, daemon=True).start()
        return self

    def _flood(self) -> None:
        while not self.stopped.is_set():
            status = b"no answer"
            try:
                with socket.create_connection((self.host, self.port), 5, (self.source, 0)) as sock:
                    sock.sendall(FLOOD_HEAD)
                    status = sock.recv(12)[9:12] or status
            except OSError:
                pass
            self.answers[status] = self.answers.get(status, 0) + 1

    def stop(self) -> None:
        self.stopped.set()


def health_latencies(host: str, port: int, seconds: float, timeout: float = 2.0) -> list[float]:
    """`GET /health` on a fresh connection, again and again for `seconds`: each one's seconds (a timeout or
    a refused connection counts as `timeout`)."""
    latencies, deadline = [], time.monotonic() + min(seconds, MAX_SECONDS)
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=timeout) as sock:
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = sock.recv(64)
            ok = answer.startswith(b"HTTP/1.1 200")
        except OSError:
            ok = False
        latencies.append(time.monotonic() - started if ok else timeout)
        time.sleep(0.05)
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url")
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--body", action="store_true", help="trickle a body instead of headers")
    parser.add_argument("--source", default="127.0.0.2", help="the slow sockets' loopback address")
    parser.add_argument("--header-flood", type=int, default=0, help="connections sending 51,000-field heads")
    args = parser.parse_args()
    parts = urlsplit(args.url)
    idle = health_latencies(parts.hostname, parts.port, min(args.seconds, 10))
    print(
        f"idle: {len(idle)} /health requests: p50 {statistics.median(idle) * 1000:.1f} ms, p99 "
        f"{percentile(idle, 0.99) * 1000:.1f} ms"
    )
    if args.header_flood:
        flood = HeaderFlood(parts.hostname, parts.port, args.header_flood, args.source).start()
        try:
            latencies = health_latencies(parts.hostname, parts.port, args.seconds)
        finally:
            flood.stop()
        p50 = statistics.median(latencies)
        print(
            f"{len(latencies)} /health requests beside {args.header_flood} connections sending 51,000-field "
            f"heads (answered {dict(sorted(flood.answers.items()))}): p50 {p50 * 1000:.1f} ms "
            f"({p50 / statistics.median(idle):.1f}x idle), p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
            f"max {max(latencies) * 1000:.1f} ms"
        )
        return
    slow = SlowClients(
        parts.hostname, parts.port, args.sockets, body=args.body, replenish=True, source=args.source
    ).start()
    try:
        latencies = health_latencies(parts.hostname, parts.port, args.seconds)
    finally:
        still_open = slow.open_count()
        slow.stop()
    p50, p99 = statistics.median(latencies) * 1000, percentile(latencies, 0.99) * 1000
    print(
        f"{len(latencies)} /health requests beside {args.sockets} slow sockets ({still_open} still open "
        f"at the end): p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
