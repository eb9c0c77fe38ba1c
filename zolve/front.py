"""The API's front: an asyncio server that reads each request whole (its head within
ZOLVE_REQUEST_HEADER_SECONDS, its body within ZOLVE_REQUEST_BODY_SECONDS, both capped) before it hands the
request to gunicorn, whose threads therefore never wait on a client's network. A slow or stalled client
costs a socket and a coroutine here, never one of the threads that answer everyone else.

gunicorn listens on a unix socket in a private directory, which only this front can reach. The front keeps
its connections to it open between requests (HTTP/1.1 keep-alive, `Upstream`: a connection made per request
cost the front about half of its time per request) and names each request's client in a header of its own,
CLIENT_HEADER, which it removes from whatever the client sent (the app's REMOTE_ADDR, for rate limits:
zolve.servers.ClientAddress). The response is streamed back as gunicorn writes it (event streams too). At
most `capacity` requests are at gunicorn at once, being computed; past that, the clients share the time
(zolve.fair_queue: the next place goes to the client that has used the least).

The client's connection is kept alive (HTTP/1.1) when the response's end can be told from its framing
(Content-Length, chunked, or no body: HEAD, 1xx, 204, 304): its next request is read as the first was, with
its own deadlines (the head's from its first byte), after an idle wait of at most `keepalive_seconds`,
which ends the connection silently. Requests sent before their turn (pipelined) wait in the socket and are
answered one after the other. The connection closes after a response whose end is its close, after
`Connection: close` from the client, after an HTTP/1.0 request, after a request whose body's end is unknown
(a Transfer-Encoding other than chunked), after a 400, 413, 414 or 431, and after any refusal of the
front's.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ipaddress
import json
import logging
import re
import signal
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from http import HTTPStatus

import uvloop

from zolve.access_log import AccessLog
from zolve.fair_queue import FairQueue, Place

log = logging.getLogger("zolve.front")

#: a request's head (request line and headers) above this is refused before gunicorn: it is far more than
#: gunicorn's own limits leave room for in practice (8,190-byte line and fields, 100 fields), which it
#: checks and refuses itself (414, 431)
MAX_HEAD_BYTES = 256 * 1024
#: headers the front sets itself on the way to gunicorn (one request per upstream connection)
HOP_BY_HOP = (b"connection", b"keep-alive", b"proxy-connection", b"expect", b"upgrade")
_PIPE_CHUNK = 64 * 1024
#: answers to a request refused for its form (gunicorn's own: malformed, its line or a header too long):
#: the connection ends after them, as gunicorn itself ends it
CLOSING_STATUSES = frozenset({400, 413, 414, 431})
#: a header's name (RFC 9110, 5.1: a token)
_FIELD_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
#: the refusal of a header line that is not `name: value`. It quotes nothing of the line, and the line never
#: reaches gunicorn, whose warning would quote it whole in the error log (a mistyped `Authorization Bearer
#: <key>` with it)
MALFORMED_HEADER = "a header line is not `name: value` (a field name is a token, followed by a colon)"
#: the front process's name (ps, /proc/PID/comm)
COMM = b"zolve-front"
#: the header that names a request's client to gunicorn (its address); a client's own is removed
CLIENT_HEADER = b"zolve-client-address"
#: methods whose request may be sent again when a kept-alive connection to gunicorn turns out closed
#: before any answer (RFC 9110, 9.2.2): only these go on kept connections
IDEMPOTENT = frozenset({b"GET", b"HEAD", b"OPTIONS", b"PUT", b"DELETE"})
#: a kept connection that fails within this long of the request's sending had been closed by gunicorn
#: before; one that fails later may have been computing it (a worker killed at its timeout)
STALE_SECONDS = 0.5


@dataclass(frozen=True)
class FrontConfig:
    upstream: str  # gunicorn's unix socket
    header_seconds: float
    body_seconds: float
    max_body_bytes: int
    max_connections: int
    #: how long a kept-alive connection may wait, idle, for its next request
    keepalive_seconds: float = 5.0
    #: requests computed at once (zolve.servers.front_capacity: 4 per usable CPU, within gunicorn's threads
    #: that are not for event streams); past it, clients take turns by the time they used (zolve.fair_queue)
    capacity: int = 16
    #: a request still unanswered after this long is waiting (a long-poll), not computing: its place goes on
    hold_seconds: float = 0.1
    #: an idle connection to gunicorn is closed after this long (below gunicorn's own keep-alive,
    #: zolve.servers.UPSTREAM_KEEPALIVE_SECONDS, so that gunicorn seldom closes one as it is reused)
    upstream_idle_seconds: float = 30.0
    #: idle connections to gunicorn kept at most
    upstream_idle_max: int = 64


class Refused(Exception):
    """The request is answered here with this status (JSON, as the API's errors) and not passed on."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message
        #: the refused request's line, for the access log, once its head was read
        self.request_line = b""


def refusal(status: int, message: str, phrase: str | None = None) -> bytes:
    """A whole response that answers with the API's JSON error body (`phrase`: the status line's; default
    the standard one); the connection closes after it."""
    phrase = phrase or HTTPStatus(status).phrase
    body = json.dumps({"code": status, "status": phrase, "message": message}).encode()
    retry = "Retry-After: 1\r\n" if status == 503 else ""
    head = (
        f"HTTP/1.1 {status} {phrase}\r\nConnection: close\r\nContent-Type: application/json\r\n{retry}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


@dataclass(frozen=True)
class Head:
    raw_lines: list[bytes]  # the request line, then each header line (without CRLF)
    length: int | None  # Content-Length, if given
    chunked: bool
    expects_continue: bool
    #: the client may send another request on this connection (HTTP/1.1 without `Connection: close`)
    keep_alive: bool = False
    #: the `Authorization` header's value: who the client says it is, for its turn (zolve.fair_queue)
    authorization: bytes = b""
    #: the body's end shows without the connection closing (no Transfer-Encoding other than chunked)
    framed: bool = True
    #: the `Referer` and `User-Agent` headers' values, for the access log
    referrer: bytes = b""
    agent: bytes = b""
    #: the header lines gunicorn gets: all but hop-by-hop ones and any posing as CLIENT_HEADER
    kept_lines: list[bytes] = field(default_factory=list)

    @property
    def method(self) -> bytes:
        return self.raw_lines[0].split(b" ", 1)[0].upper()

    @property
    def may_reuse(self) -> bool:
        """Whether the request may go on a kept connection to gunicorn: only one that may be sent again
        (it is, when the connection turns out closed by gunicorn) and that gunicorn keeps the connection
        after (HTTP/1.1, its body's end known). Any other goes on a new one (which is kept afterwards)."""
        return self.framed and self.method in IDEMPOTENT and self.raw_lines[0].endswith(b" HTTP/1.1")

    def forwarded(self, client: str) -> bytes:
        """The head as gunicorn gets it: hop-by-hop headers and any CLIENT_HEADER dropped, the client's
        address in CLIENT_HEADER; `Connection: close` when the body's end is unknown."""
        kept = [self.raw_lines[0], *self.kept_lines, CLIENT_HEADER + b": " + client.encode()]
        if not self.framed:
            kept.append(b"Connection: close")
        return b"\r\n".join([*kept, b"", b""])


def parse_head(raw: bytes) -> Head:
    """What the front needs of a head to read the body; anything else malformed is gunicorn's to refuse,
    except a line ended by a bare CR or LF: the front and gunicorn could read its headers differently."""
    lines = raw[:-4].split(b"\r\n")
    if raw.count(b"\n") != raw.count(b"\r\n") or raw.count(b"\r") != raw.count(b"\r\n"):
        raise Refused(400, "a line of the request's head ends in a bare CR or LF, not CRLF")
    lengths, chunked, expects, authorization, unknown = set(), False, False, b"", False
    referrer = agent = b""
    kept = []
    keep_alive = lines[0].rstrip().endswith(b" HTTP/1.1")
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not (colon and _FIELD_NAME.fullmatch(name)):
            raise Refused(400, MALFORMED_HEADER)
        name, value = name.lower(), value.strip()
        # gunicorn and WSGI read `_` in a name as `-`: such a name poses as the client's address too
        if name not in HOP_BY_HOP and name.replace(b"_", b"-") != CLIENT_HEADER:
            kept.append(line)
        if name == b"content-length":
            lengths.add(value)
        elif name == b"transfer-encoding":
            chunked = chunked or value.lower().endswith(b"chunked")
            # any other coding leaves the body's end unknown (RFC 9112, 6.3): this request is the last
            unknown = unknown or not value.lower().endswith(b"chunked")
            keep_alive = keep_alive and not unknown
        elif name == b"expect":
            expects = value.lower() == b"100-continue"
        elif name == b"connection" and b"close" in _tokens(value):
            keep_alive = False
        elif name == b"authorization":
            authorization = value
        elif name == b"referer":
            referrer = value
        elif name == b"user-agent":
            agent = value
    if len(lengths) > 1 or (lengths and chunked):
        raise Refused(400, "conflicting Content-Length and Transfer-Encoding headers")
    length = None
    if lengths:
        (text,) = lengths
        if not (text.isdigit() and len(text) <= 18):
            raise Refused(400, "Content-Length must be a number of bytes")
        length = int(text)
    return Head(
        lines, length, chunked, expects, keep_alive, authorization, not unknown, referrer, agent, kept
    )


def _tokens(value: bytes) -> set[bytes]:
    return {token.strip().lower() for token in value.split(b",")}


def chunk_size(line: bytes) -> int:
    """A chunk's size line (hex digits only, extensions after `;` ignored); ValueError when it is none.
    Strict, as gunicorn is: the front and gunicorn must find the same end of a body, or the rest of it
    would be read as the next request on a kept connection (int() alone would take `0x1a`, `1_0`, `+5`)."""
    size = line.split(b";", 1)[0].rstrip(b"\r\n").rstrip(b" \t")
    if not _CHUNK_SIZE.fullmatch(size):
        raise ValueError("not a chunk size")
    return int(size, 16)


async def read_chunked(reader: asyncio.StreamReader, limit: int) -> bytes:
    """A chunked body as sent (framing included), refused past `limit` bytes of data."""
    parts, size = [], 0
    while True:
        line = await reader.readuntil(b"\r\n")
        parts.append(line)
        try:
            chunk = chunk_size(line)
        except ValueError:
            raise Refused(400, "malformed chunked body") from None
        size += chunk
        if size > limit:
            raise Refused(413, "request body too large")
        if chunk == 0:
            while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                parts.append(trailer)
            parts.append(b"\r\n")
            return b"".join(parts)
        data = await reader.readexactly(chunk + 2)
        if not data.endswith(b"\r\n"):
            raise Refused(400, "malformed chunked body")
        parts.append(data)


def client_address(peer: object) -> str:
    """The client's address for gunicorn (the app's REMOTE_ADDR); a unix or unknown peer is 127.0.0.1,
    an IPv4-mapped IPv6 address its IPv4 form."""
    host = str(peer[0]) if isinstance(peer, tuple) and len(peer) >= 2 else "127.0.0.1"
    address = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return str(address)


@dataclass(frozen=True)
class ResponseHead:
    status: int
    lines: list[bytes]  # the status line, then each header line (without CRLF)
    length: int | None
    chunked: bool
    #: gunicorn ends the connection after this response (`Connection: close`, or HTTP/1.0)
    closes: bool = False

    def framed(self, method: bytes) -> bool:
        """Whether the response's end shows without its connection closing."""
        return self.bodiless(method) or self.chunked or self.length is not None

    def bodiless(self, method: bytes) -> bool:
        return method == b"HEAD" or self.status < 200 or self.status in (204, 304)

    def to_client(self, keep_alive: bool) -> bytes:
        """The head as the client gets it: gunicorn's `Connection` (close: the front asked for it) replaced
        by the front's own decision."""
        kept = [self.lines[0]] + [
            line for line in self.lines[1:] if line.split(b":", 1)[0].strip().lower() not in HOP_BY_HOP
        ]
        if not keep_alive and self.status >= 200:
            kept.append(b"Connection: close")
        return b"\r\n".join([*kept, b"", b""])


def parse_response_head(raw: bytes) -> ResponseHead:
    lines = raw[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise ValueError("not an HTTP status line")
    length, chunked, closes = None, False, parts[0] != b"HTTP/1.1"
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name, value = name.strip().lower(), value.strip()
        if name == b"content-length" and value.isdigit():
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = chunked or value.lower().endswith(b"chunked")
        elif name == b"connection":
            closes = closes or b"close" in _tokens(value)
    return ResponseHead(int(parts[1]), lines, None if chunked else length, chunked, closes)


def _no_delay(writer: asyncio.StreamWriter) -> None:
    """TCP_NODELAY on a client's connection: a response's head and body are written apart, and without
    it the body of each response on a kept-alive connection waits for the client's delayed ACK (40 ms).
    asyncio sets it only on sockets whose protocol number says TCP, which the listener's
    (socket.create_server: protocol 0) does not."""
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


@dataclass(eq=False)
class UpstreamConnection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    #: whether it carried a request before this one (it may have been closed by gunicorn meanwhile)
    reused: bool = False
    idle_since: float = field(default_factory=time.monotonic)

    def close(self) -> None:
        self.writer.close()


class Upstream:
    """Connections to gunicorn's socket, kept open between requests. The most recently used idle one is
    taken first; one idle for `idle_seconds` (a timer runs while any is idle), or seen closed by gunicorn,
    is closed here."""

    def __init__(self, path: str, idle_seconds: float, idle_max: int) -> None:
        self.path, self.idle_seconds, self.idle_max = path, idle_seconds, idle_max
        self.idle: deque[UpstreamConnection] = deque()
        self.timer: asyncio.TimerHandle | None = None

    async def take(self) -> UpstreamConnection:
        while self.idle:
            connection = self.idle.pop()
            if not (connection.reader.at_eof() or connection.writer.is_closing()):
                connection.reused = True
                return connection
            connection.close()
        return await self.connect()

    async def connect(self) -> UpstreamConnection:
        try:
            reader, writer = await asyncio.open_unix_connection(self.path, limit=MAX_HEAD_BYTES)
        except OSError:
            raise Refused(503, "the API is starting or restarting; retry shortly") from None
        return UpstreamConnection(reader, writer)

    def give_back(self, connection: UpstreamConnection) -> None:
        """For another request: its response was read whole and gunicorn keeps the connection."""
        if len(self.idle) >= self.idle_max:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        self.idle.append(connection)
        if self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(self.idle_seconds, self._on_timer)

    def _on_timer(self) -> None:
        self.timer = None
        self._close_expired()
        if self.idle:
            wait = self.idle[0].idle_since + self.idle_seconds - time.monotonic()
            self.timer = asyncio.get_running_loop().call_later(max(wait, 0.01), self._on_timer)

    def _close_expired(self) -> None:
        expired = time.monotonic() - self.idle_seconds
        while self.idle and self.idle[0].idle_since <= expired:
            self.idle.popleft().close()


@dataclass
class Outcome:
    """What the client was answered, for the access log: 499 until a response's head went to it."""

    status: int = 499
    size: int | None = None


def _refuse(writer: asyncio.StreamWriter, outcome: Outcome, status: int, message: str) -> None:
    """Answer the client with the front's own refusal (its connection ends after it)."""
    answer = refusal(status, message)
    writer.write(answer)
    outcome.status, outcome.size = status, len(answer) - answer.index(b"\r\n\r\n") - 4


class Front:
    def __init__(self, config: FrontConfig, log: AccessLog | None = None) -> None:
        self.config = config
        self.open = 0
        self.turns = FairQueue(config.capacity)
        self.upstream = Upstream(config.upstream, config.upstream_idle_seconds, config.upstream_idle_max)
        self.log = log

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        _no_delay(writer)
        peer, client = writer.get_extra_info("peername"), "127.0.0.1"
        try:
            client = client_address(peer)
            if self.open > self.config.max_connections:
                raise Refused(503, "the server has too many connections open; retry shortly")
            first, address = True, peer[0] if isinstance(peer, tuple) else None
            while True:
                request = await self._read_request(reader, writer, first, client)
                if request is None:
                    return
                head, raw = request
                outcome = Outcome()
                try:
                    if not await self._relay(head, raw, writer, address, outcome):
                        return
                finally:
                    self._record(client, head.raw_lines[0], outcome, head)
                first = False
        except Refused as refused:
            outcome = Outcome()
            _refuse(writer, outcome, refused.status, refused.message)
            self._record(client, refused.request_line, outcome)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away
        finally:
            self.open -= 1
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.drain(), 5)
            writer.close()

    def _record(self, client: str, request_line: bytes, outcome: Outcome, head: Head | None = None) -> None:
        if self.log is not None:
            referrer, agent = (head.referrer, head.agent) if head else (b"", b"")
            self.log.record(client, request_line, outcome.status, outcome.size, referrer, agent)

    async def _read_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bool, client: str
    ) -> tuple[Head, bytes] | None:
        """The next request whole (its head and body, each within its deadline), or None when the client
        sent none (it closed, or a kept-alive connection stayed idle for keepalive_seconds); the request as
        gunicorn gets it, which names `client`."""
        start = b""
        if not first:  # idle until the next request's first byte; its head's deadline runs from there
            try:
                async with asyncio.timeout(self.config.keepalive_seconds):
                    start = await reader.read(1)
            except TimeoutError:
                return None
            if not start:
                return None
        try:
            async with asyncio.timeout(self.config.header_seconds):
                raw = start + await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise Refused(408, f"the request's headers took over {self.config.header_seconds:g} s") from None
        except asyncio.LimitOverrunError:
            raise Refused(431, f"the request's head is over {MAX_HEAD_BYTES} bytes") from None
        except asyncio.IncompleteReadError:
            return None  # closed before a whole head: nothing to answer
        try:
            head = parse_head(raw)
            return head, head.forwarded(client) + await self._read_body(reader, writer, head)
        except Refused as refused:
            refused.request_line = raw.split(b"\r\n", 1)[0]
            raise

    async def _read_body(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: Head
    ) -> bytes:
        if head.length is not None and head.length > self.config.max_body_bytes:
            raise Refused(413, "request body too large")
        if head.expects_continue and (head.length or head.chunked):
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            async with asyncio.timeout(self.config.body_seconds):
                if head.chunked:
                    return await read_chunked(reader, self.config.max_body_bytes)
                return await reader.readexactly(head.length) if head.length else b""
        except TimeoutError:
            raise Refused(408, f"the request's body took over {self.config.body_seconds:g} s") from None

    async def _relay(
        self, head: Head, request: bytes, writer: asyncio.StreamWriter, address: object, outcome: Outcome
    ) -> bool:
        """Send the whole request to gunicorn in its client's turn and stream its answer back; True when
        the client's connection may carry another request (the response was whole, and framed)."""
        ticket = await self.turns.enter(address, hash(head.authorization))
        place = Place(self.turns, ticket, self.config.hold_seconds)
        try:
            return await self._exchange(head, request, writer, place, outcome)
        except Refused as refused:  # gunicorn cannot be reached
            _refuse(writer, outcome, refused.status, refused.message)
            return False
        finally:
            place.give_back()

    async def _exchange(
        self, head: Head, request: bytes, writer: asyncio.StreamWriter, place: Place, outcome: Outcome
    ) -> bool:
        connection = await (self.upstream.take() if head.may_reuse else self.upstream.connect())
        reusable = False
        try:
            try:
                raw = await self._send(connection, head, request)
                while 100 <= (response := parse_response_head(raw)).status < 200:
                    writer.write(raw)  # an interim response: the final one follows
                    raw = await connection.reader.readuntil(b"\r\n\r\n")
            except (ConnectionError, asyncio.IncompleteReadError):
                # gunicorn closed before a whole answer (a worker killed, or one restarting)
                _refuse(writer, outcome, 502, "the API closed the connection before answering; retry shortly")
                return False
            except (asyncio.LimitOverrunError, ValueError):
                # not a response this front can frame: pass on whatever comes, and close
                outcome.status = 502
                await self._pipe(connection.reader, writer, outcome)
                return False
            place.give_back()  # computed: what is left is passing the body on
            keep_alive = (
                head.keep_alive and response.framed(head.method) and response.status not in CLOSING_STATUSES
            )
            writer.write(response.to_client(keep_alive))
            outcome.status = response.status
            outcome.size = 0 if response.bodiless(head.method) else response.length
            if response.bodiless(head.method):
                whole = True
            elif response.chunked:
                whole = await self._relay_chunked(connection.reader, writer, outcome)
            elif response.length is not None:
                whole = (
                    await self._relay_length(connection.reader, writer, response.length) == response.length
                )
            else:  # the body ends when gunicorn closes
                await self._pipe(connection.reader, writer, outcome)
                return False
            reusable = whole and head.framed and not response.closes
            return keep_alive and whole
        finally:
            if reusable:
                self.upstream.give_back(connection)
            else:
                connection.close()

    async def _send(self, connection: UpstreamConnection, head: Head, request: bytes) -> bytes:
        """Send the request and read its answer's first head. A kept connection that gunicorn had closed
        (a worker restarted) is replaced by a new one, once, when it failed with no byte of an answer and
        at once: only requests that may be sent twice go on kept connections (Head.may_reuse), and one
        that failed later may have been computed until its worker was killed (it is not sent again)."""
        sent = time.monotonic()
        try:
            await self._write(connection, head, request)
            return await connection.reader.readuntil(b"\r\n\r\n")
        except (ConnectionError, asyncio.IncompleteReadError) as error:
            unanswered = not getattr(error, "partial", b"")
            if not (connection.reused and unanswered and time.monotonic() - sent < STALE_SECONDS):
                raise
        return await self._send_again(connection, head, request)

    async def _send_again(self, connection: UpstreamConnection, head: Head, request: bytes) -> bytes:
        connection.close()
        fresh = await self.upstream.connect()
        connection.reader, connection.writer, connection.reused = fresh.reader, fresh.writer, False
        await self._write(connection, head, request)
        return await connection.reader.readuntil(b"\r\n\r\n")

    @staticmethod
    async def _write(connection: UpstreamConnection, head: Head, request: bytes) -> None:
        connection.writer.write(request)
        await connection.writer.drain()
        if not head.framed and connection.writer.can_write_eof():
            # and nothing after it: whatever framing gunicorn reads, it never waits for more from us
            connection.writer.write_eof()

    @staticmethod
    async def _pipe(up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, outcome: Outcome) -> None:
        """Pass on whatever comes until gunicorn closes (counted in `outcome.size`, the body's bytes)."""
        outcome.size = sent = 0
        while chunk := await up_reader.read(_PIPE_CHUNK):
            writer.write(chunk)
            sent += len(chunk)
            outcome.size = sent
            await writer.drain()

    @staticmethod
    async def _relay_length(
        up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, length: int
    ) -> int:
        """Pass on `length` bytes; the bytes passed on, fewer when gunicorn closed before (the client
        cannot tell a body cut short, so its connection ends after it)."""
        sent = 0
        while sent < length:
            chunk = await up_reader.read(min(length - sent, _PIPE_CHUNK))
            if not chunk:
                break
            writer.write(chunk)
            sent += len(chunk)
            await writer.drain()
        return sent

    async def _relay_chunked(
        self, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, outcome: Outcome
    ) -> bool:
        """A chunked body as gunicorn writes it, each chunk passed on as it comes (event streams); the
        bytes passed on (chunk framing included, as sent) counted in `outcome.size`."""
        outcome.size = 0

        def send(data: bytes) -> None:
            writer.write(data)
            outcome.size += len(data)

        try:
            while True:
                line = await up_reader.readuntil(b"\r\n")
                send(line)
                try:
                    size = chunk_size(line)
                except ValueError:
                    return False
                if size == 0:
                    while (trailer := await up_reader.readuntil(b"\r\n")) != b"\r\n":
                        send(trailer)
                    send(trailer)
                    await writer.drain()
                    return True
                sent = await self._relay_length(up_reader, writer, size + 2)
                outcome.size += sent
                if sent < size + 2:
                    return False
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
            if isinstance(error, asyncio.IncompleteReadError):
                send(error.partial)
            return False


async def serve(listener: socket.socket, config: FrontConfig) -> None:
    log = AccessLog()
    front = Front(config, log)
    server = await asyncio.start_server(front.handle, sock=listener, limit=MAX_HEAD_BYTES, backlog=2048)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        async with server:
            await stop.wait()
    finally:
        log.close()


def run(listener: socket.socket, config: FrontConfig) -> None:
    """The front's process: it ends with its parent (gunicorn's arbiter), however that ends."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        libc.prctl(15, ctypes.c_char_p(COMM))  # PR_SET_NAME: how ps and /proc/PID/comm name it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C goes to the arbiter, which stops us with it
    uvloop.run(serve(listener, config))
