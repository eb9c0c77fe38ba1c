"""zolve.front keeps a client's connection alive between requests (issue 32, the API's performance): each
request on it is read whole within its own deadlines, each response framed so that the client can tell
its end, and the connection closes whenever the next request could not be told apart.

The front here runs in-process, in front of a stand-in for gunicorn (a unix socket that answers each
request with a canned response, keeps its connection as gunicorn does, and records what it got); the
slow-client tests
(tests/security/test_slow_clients.py) and the live test at the end use the real `zolve api`."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import ApiServer, wait_until
from zolve import front
from zolve.access_log import AccessLog

OK = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
CHUNKS = b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
#: header and body deadlines of the front under test, and its idle keep-alive
DEADLINE = 1.0
IDLE = 1.5


class Upstream:
    """gunicorn's stand-in: answers each request with `respond(request)`, on the same connection until the
    request or the response says `Connection: close`. `answers_per_connection`: after that many, the next
    request on the connection is read and the connection closed unanswered (a worker that restarted)."""

    def __init__(
        self,
        path: Path,
        respond: Callable[[bytes], bytes],
        seconds: float = 0,
        answers_per_connection: int | None = None,
    ) -> None:
        self.path, self.respond, self.seconds = path, respond, seconds
        self.answers_per_connection = answers_per_connection
        self.requests: list[bytes] = []
        self.connections = self.closed_by_front = 0
        #: the front's access log (set by the `served` fixture)
        self.access_log: Path | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        answered = 0
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    self.closed_by_front += 1
                    return
                request = head + await self._body(reader, head.lower())
                self.requests.append(request)
                if answered == self.answers_per_connection:
                    return
                await asyncio.sleep(self.seconds)  # computing the answer
                response = self.respond(request)
                writer.write(response)
                await writer.drain()
                answered += 1
                if b"connection: close" in (head + response.split(b"\r\n\r\n")[0]).lower():
                    return
        finally:
            writer.close()

    @staticmethod
    async def _body(reader: asyncio.StreamReader, head: bytes) -> bytes:
        if b"transfer-encoding: chunked" in head:
            return await front.read_chunked(reader, 1 << 30)
        if length := re.search(rb"content-length: *(\d+)", head):
            return await reader.readexactly(int(length.group(1)))
        return await reader.read() if b"transfer-encoding" in head else b""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[[Callable[[bytes], bytes]], tuple[int, Upstream]]]:
    """Start the front (and its upstream) on a loop in a thread; gives (port, upstream)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers = []
    logs: list[AccessLog] = []

    def start(
        respond: Callable[[bytes], bytes],
        seconds: float = 0,
        answers_per_connection: int | None = None,
        **options: float,
    ) -> tuple[int, Upstream]:
        """`seconds`: how long the upstream computes each answer; `options`: the FrontConfig's capacity,
        hold_seconds, upstream_idle_seconds."""
        upstream = Upstream(tmp_path / "up.sock", respond, seconds, answers_per_connection)
        listener = socket.create_server(("127.0.0.1", 0))
        config = front.FrontConfig(
            upstream=str(upstream.path),
            header_seconds=DEADLINE,
            body_seconds=DEADLINE,
            max_body_bytes=1000,
            max_connections=100,
            keepalive_seconds=IDLE,
            **options,
        )

        upstream.access_log = tmp_path / "access.log"
        log = AccessLog(fd=os.open(upstream.access_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND))
        logs.append(log)

        async def begin() -> None:
            servers.append(await asyncio.start_unix_server(upstream.handle, path=str(upstream.path)))
            servers.append(
                await asyncio.start_server(
                    front.Front(config, log).handle, sock=listener, limit=front.MAX_HEAD_BYTES
                )
            )

        asyncio.run_coroutine_threadsafe(begin(), loop).result(5)
        return listener.getsockname()[1], upstream

    yield start

    async def end() -> None:
        for server in servers:
            server.close()
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run_coroutine_threadsafe(end(), loop).result(5)
    for log in logs:
        loop.call_soon_threadsafe(log.close)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


class Conn:
    """A raw client connection that reads responses by their framing."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.file = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def response(self, head_request: bool = False) -> tuple[int, dict[bytes, bytes], bytes]:
        status_line = self.file.readline()
        assert status_line, "the connection closed before a response"
        headers = {}
        while (line := self.file.readline()) != b"\r\n":
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        status = int(status_line.split()[1])
        if head_request or status in (204, 304) or status < 200:
            return status, headers, b""
        if headers.get(b"transfer-encoding", b"").endswith(b"chunked"):
            body = b""
            while size := int(self.file.readline().split(b";")[0], 16):
                body += self.file.read(size)
                assert self.file.readline() == b"\r\n"
            assert self.file.readline() == b"\r\n"
            return status, headers, body
        if b"content-length" in headers:
            return status, headers, self.file.read(int(headers[b"content-length"]))
        return status, headers, self.file.read()

    def closed(self, within: float = 5) -> bool:
        """Whether the server closes the connection (with nothing more sent) within `within` seconds."""
        self.sock.settimeout(within)
        try:
            return self.file.read(1) == b""
        except TimeoutError:
            return False

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def get(path: str = "/health", extra: bytes = b"") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n".encode() + extra + b"\r\n"


def test_two_requests_on_one_connection(served) -> None:
    port, upstream = served(lambda request: OK)
    conn = Conn(port)
    for _ in range(2):
        conn.send(get())
        status, headers, body = conn.response()
        assert (status, body) == (200, b"ok")
        assert b"connection" not in headers, "gunicorn's Connection: close is the front's business"
    assert len(upstream.requests) == 2
    conn.close()


def echo_client(request: bytes) -> bytes:
    """Answers with the client addresses the request names."""
    named = b",".join(re.findall(rb"\r\nzolve-client-address: ([^\r]*)", request, re.IGNORECASE))
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(named), named)


def test_requests_of_many_clients_share_a_kept_connection_to_gunicorn(served) -> None:
    port, upstream = served(echo_client)
    for _ in range(3):
        conn = Conn(port)
        conn.send(get())
        assert conn.response()[::2] == (200, b"127.0.0.1")
        conn.close()
    assert upstream.connections == 1
    assert len(upstream.requests) == 3
    assert not any(b"connection:" in request.lower() for request in upstream.requests)


def test_a_client_cannot_name_its_own_address(served) -> None:
    port, _ = served(echo_client)
    conn = Conn(port)
    for forged in (b"Zolve-Client-Address: 203.0.113.9", b"zolve_client_address: 203.0.113.9"):
        conn.send(get(extra=forged + b"\r\n"))
        assert conn.response()[::2] == (200, b"127.0.0.1"), forged
    conn.close()


def test_a_kept_connection_gunicorn_closed_is_replaced_for_a_request_that_may_be_sent_again(served) -> None:
    """A restarted worker closes its kept connections: a GET that met one, unanswered, goes again on a new
    connection. A POST (it may be acted on twice) never goes on a kept connection, so it is never sent
    again."""
    port, upstream = served(echo_path, answers_per_connection=1)
    conn = Conn(port)
    conn.send(get("/first"))
    assert conn.response()[2] == b"first"
    conn.send(get("/again"))
    assert conn.response()[2] == b"again"
    assert upstream.connections == 2
    conn.send(b"POST /once HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
    assert conn.response()[2] == b"once"
    assert upstream.connections == 3
    paths = [request.split(b" ")[1] for request in upstream.requests]
    assert paths == [b"/first", b"/again", b"/again", b"/once"]
    conn.close()


def test_a_request_gunicorn_closes_on_unanswered_gets_a_502_and_is_not_sent_again(served) -> None:
    """A worker killed while computing it: the client is told (502, the API's JSON), never left with a
    connection closed on it."""
    port, upstream = served(echo_path, answers_per_connection=0)
    for request in (get("/lost"), b"POST /lost HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"):
        conn = Conn(port)
        conn.send(request)
        status, headers, body = conn.response()
        assert (status, headers[b"connection"]) == (502, b"close") and b"before answering" in body
        assert conn.closed()
    assert len(upstream.requests) == 2


def test_an_idle_connection_to_gunicorn_is_closed_after_its_time(served) -> None:
    port, upstream = served(echo_path, upstream_idle_seconds=0.2)
    conn = Conn(port)
    conn.send(get("/one"))
    assert conn.response()[2] == b"one"
    wait = time.monotonic() + 5
    while upstream.closed_by_front < 1 and time.monotonic() < wait:
        time.sleep(0.02)
    assert upstream.closed_by_front == 1, "closed without another request coming"
    conn.send(get("/two"))
    assert conn.response()[2] == b"two"
    assert upstream.connections == 2
    conn.close()


def test_a_response_is_not_held_back_by_nagle(served) -> None:
    """The front writes a response's head and body apart: without TCP_NODELAY the body waits for the
    client's delayed ACK (40 ms on Linux) on every request of a kept-alive connection."""
    port, _ = served(lambda request: OK)
    conn = Conn(port)
    started = time.monotonic()
    for _ in range(20):
        conn.send(get())
        assert conn.response()[0] == 200
    assert time.monotonic() - started < 0.6, "20 requests at 40 ms each would take 0.8 s"
    conn.close()


def test_the_header_deadline_applies_to_the_second_request(served) -> None:
    port, _ = served(lambda request: OK)
    conn = Conn(port)
    conn.send(get())
    assert conn.response()[0] == 200
    conn.send(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
    started = time.monotonic()
    status, headers, body = conn.response()
    assert status == 408 and b"headers" in body
    assert headers[b"connection"] == b"close" and conn.closed()
    assert time.monotonic() - started < DEADLINE + 2


def test_the_body_deadline_applies_to_the_second_request(served) -> None:
    port, _ = served(lambda request: OK)
    conn = Conn(port)
    conn.send(get())
    assert conn.response()[0] == 200
    conn.send(b"POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
    status, headers, body = conn.response()
    assert status == 408 and b"body" in body and conn.closed()


def test_an_idle_kept_alive_connection_closes_quietly(served) -> None:
    port, _ = served(lambda request: OK)
    conn = Conn(port)
    conn.send(get())
    assert conn.response()[0] == 200
    started = time.monotonic()
    assert conn.closed(IDLE + 3), "closed without a 408 a client could take for its next request's"
    assert time.monotonic() - started >= IDLE - 0.2


def test_connection_close_from_the_client_or_http_1_0_closes(served) -> None:
    port, _ = served(lambda request: OK)
    for request in (get(extra=b"Connection: close\r\n"), b"GET /health HTTP/1.0\r\nHost: x\r\n\r\n"):
        conn = Conn(port)
        conn.send(request)
        status, headers, body = conn.response()
        assert (status, body, headers[b"connection"]) == (200, b"ok", b"close")
        assert conn.closed()


def test_a_response_that_ends_with_its_connection_closes_the_clients(served) -> None:
    port, _ = served(lambda request: b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it")
    conn = Conn(port)
    conn.send(get())
    status, headers, body = conn.response()
    assert (status, headers[b"connection"], body) == (200, b"close", b"all of it")


def test_a_response_cut_short_closes_the_clients_connection(served) -> None:
    port, _ = served(lambda request: b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\nabc")
    conn = Conn(port)
    conn.send(get())
    answer = conn.file.read()  # to its end: the socket's 5-s timeout raises if the front keeps it open
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\nabc"), answer


def test_chunked_responses_head_and_no_content_keep_the_connection(served) -> None:
    def respond(request: bytes) -> bytes:
        if b"GET /chunked " in request:
            return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKS
        if request.startswith(b"HEAD "):
            return b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
        return b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"

    port, _ = served(respond)
    conn = Conn(port)
    conn.send(get("/chunked"))
    assert conn.response()[::2] == (200, b"abcde")
    conn.send(b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n")
    status, headers, body = conn.response(head_request=True)
    assert (status, headers[b"content-length"], body) == (200, b"5", b"")
    conn.send(get("/nothing"))
    status, headers, _ = conn.response()
    assert status == 204 and b"connection" not in headers
    conn.send(get("/chunked"))
    assert conn.response()[::2] == (200, b"abcde"), "still in step after all three"


def test_the_access_log_counts_the_bytes_of_a_chunked_or_unframed_body(served) -> None:
    def respond(request: bytes) -> bytes:
        if b"GET /chunked " in request:
            return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKS
        return b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end"

    port, upstream = served(respond)
    conn = Conn(port)
    conn.send(get("/chunked"))
    assert conn.response()[::2] == (200, b"abcde")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(get("/unframed"))
        assert b"".join(iter(lambda: sock.recv(4096), b"")).endswith(b"to the end")
    logged = lambda: upstream.access_log.read_text().splitlines()  # noqa: E731
    wait_until(lambda: len(logged()) == 2, 5, 0.05, "both records")
    sizes = {line.split('"')[1].split()[1]: line.split('"')[2].split()[1] for line in logged()}
    assert sizes == {"/chunked": str(len(CHUNKS)), "/unframed": str(len(b"to the end"))}, logged()


def echo_path(request: bytes) -> bytes:
    path = request.split(b" ")[1][1:]
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path)


def test_pipelined_requests_are_answered_in_order(served) -> None:
    port, upstream = served(echo_path)
    conn = Conn(port)
    conn.send(get("/p1") + b"POST /p2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + get("/p3"))
    assert [conn.response()[2] for _ in range(3)] == [b"p1", b"p2", b"p3"]
    assert upstream.requests[1].endswith(b"\r\n\r\nabc"), "each request goes with its own body"


def test_a_request_whose_body_has_no_known_end_is_the_last(served) -> None:
    """A Transfer-Encoding other than chunked: whatever follows cannot be told apart from its body."""
    port, _ = served(lambda request: b"HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nbad")
    conn = Conn(port)
    conn.send(b"POST /jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n")
    status, headers, _ = conn.response()
    assert (status, headers[b"connection"]) == (400, b"close") and conn.closed()


def test_a_refusal_closes_the_connection(served) -> None:
    port, upstream = served(lambda request: OK)
    conn = Conn(port)
    conn.send(get())
    assert conn.response()[0] == 200
    conn.send(b"POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
    status, headers, _ = conn.response()
    assert (status, headers[b"connection"]) == (413, b"close") and conn.closed()
    assert len(upstream.requests) == 1


def test_a_header_line_that_is_not_name_colon_value_is_refused_unquoted_and_never_passed_on(served) -> None:
    """gunicorn's warning on such a line quotes it whole: a mistyped `Authorization Bearer <key>` would
    reach its error log (tests/security/test_access_log.py has it through zolve api)."""
    port, upstream = served(lambda request: OK)
    for line in (b"Authorization Bearer zk_secret", b"Authorization zk_secret: x", b" zk_secret"):
        conn = Conn(port)
        conn.send(get(extra=line + b"\r\n"))
        status, headers, body = conn.response()
        assert (status, headers[b"connection"]) == (400, b"close") and b"zk_secret" not in body, line
        conn.close()
    assert upstream.requests == []


def test_a_request_the_front_and_gunicorn_could_frame_differently_is_refused(served) -> None:
    """On a kept connection to gunicorn, a body's end read differently would make its rest the next
    request: chunk sizes that int() alone takes, chunk data not ended by CRLF, a bare LF in the head."""
    port, upstream = served(lambda request: OK)
    chunked = b"POST /jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    for request in (
        chunked + b"0x5\r\nabcde\r\n0\r\n\r\n",
        chunked + b"1_0\r\n" + b"a" * 16 + b"\r\n0\r\n\r\n",
        chunked + b" 5\r\nabcde\r\n0\r\n\r\n",
        chunked + b"5\r\nabcdeXY0\r\n\r\n",
        b"POST /jobs HTTP/1.1\r\nHost: x\nContent-Length: 5\r\n\r\nabcde",
        b"GET /health HTTP/1.1\r\nHost: x\rX: y\r\n\r\n",
    ):
        conn = Conn(port)
        conn.send(request)
        status, headers, _ = conn.response()
        assert (status, headers[b"connection"]) == (400, b"close"), request
        conn.close()
    assert upstream.requests == []
    conn = Conn(port)
    conn.send(chunked + b"5;ext=1 \r\nabcde\r\nA \r\n" + b"b" * 10 + b"\r\n0\r\n\r\n")
    assert conn.response()[0] == 200
    assert upstream.requests[0].endswith(b"5;ext=1 \r\nabcde\r\nA \r\n" + b"b" * 10 + b"\r\n0\r\n\r\n")
    conn.close()


def test_past_its_capacity_the_front_lets_clients_take_turns(served) -> None:
    """Capacity 1: while A's first request is computed (0.3 s), A sends two more and B one; B's comes
    next, A having used the service's time already (without turns it would come last, after all of A's)."""
    port, upstream = served(echo_path, seconds=0.3, capacity=1, hold_seconds=10)
    sent = []
    for client, path in [(b"A", "/a1"), (b"A", "/a2"), (b"A", "/a3"), (b"B", "/b1")]:
        conn = Conn(port)
        conn.send(get(path, b"Authorization: Bearer " + client + b"\r\n"))
        sent.append(conn)
        time.sleep(0.05)  # each waits before the next is sent: their order of arrival is known
    bodies = [conn.response()[2] for conn in sent]
    assert bodies == [b"a1", b"a2", b"a3", b"b1"]
    arrived = [request.split(b" ")[1] for request in upstream.requests]
    assert arrived == [b"/a1", b"/b1", b"/a2", b"/a3"]


def test_a_request_waiting_longer_than_the_hold_lets_the_next_one_in(served) -> None:
    """A long-poll at capacity 1 keeps no one out for longer than the hold."""
    port, upstream = served(echo_path, seconds=1.0, capacity=1, hold_seconds=0.1)
    first, second = Conn(port), Conn(port)
    first.send(get("/long"))
    time.sleep(0.05)
    started = time.monotonic()
    second.send(get("/next"))
    assert second.response()[2] == b"next"
    assert time.monotonic() - started < 1.9  # in after the hold: its own second, not also the first's
    assert first.response()[2] == b"long"


def test_two_requests_on_one_connection_through_zolve_api(live_api) -> None:
    conn = Conn(live_api.port)
    try:
        for _ in range(3):
            conn.send(get("/health"))
            status, headers, body = conn.response()
            assert status == 200 and b"connection" not in headers, headers
        conn.send(get("/jobs/00000000-0000-0000-0000-000000000000", b"Connection: close\r\n"))
        status, headers, _ = conn.response()
        assert (status, headers[b"connection"]) == (401, b"close") and conn.closed()
    finally:
        conn.close()


#: seconds of the live test's request budget
BUDGET_WINDOW = 5


def _status_from(source: str, port: int, extra: bytes = b"") -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0)) as sock:
        sock.sendall(get("/jobs", extra + b"Connection: close\r\n"))
        return int(sock.makefile("rb").readline().split()[1])


def test_the_app_counts_each_client_by_its_own_address_through_zolve_api(worker_env, tmp_path) -> None:
    """The budget of a client without a key is its address's: five requests from 127.0.0.1, each naming
    another address in the front's header, spend one budget; 127.0.0.2 still has its own. The budget's
    windows are the clock's (5 s): the requests are made in one window that no one else has counted in."""
    env = {**worker_env, "ZOLVE_RATE_LIMIT": f"5 per {BUDGET_WINDOW} seconds", "ZOLVE_SECRET_KEY": "test"}
    server = ApiServer(env, tmp_path / "api.log").start()
    try:
        forged = [b"Zolve-Client-Address: 198.51.100.%d\r\n" % n for n in range(6)]
        for _attempt in range(3):
            time.sleep(BUDGET_WINDOW - time.time() % BUDGET_WINDOW)  # a window just begun
            window = time.time() // BUDGET_WINDOW
            statuses = [_status_from("127.0.0.1", server.port, header) for header in forged]
            elsewhere = _status_from("127.0.0.2", server.port)
            if time.time() // BUDGET_WINDOW == window:
                break
        assert statuses == [401] * 5 + [429]
        assert elsewhere == 401
    finally:
        server.stop()
