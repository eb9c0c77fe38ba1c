"""The API's front: an asyncio server that reads each request whole (its head within
ZOLVE_REQUEST_HEADER_SECONDS, its body within ZOLVE_REQUEST_BODY_SECONDS, both capped) before it hands the
request to gunicorn, whose threads therefore never wait on a client's network. A slow or stalled client
costs a socket and a coroutine here, never one of the threads that answer everyone else.

gunicorn listens on a unix socket in a private directory; each request goes to it on a connection of its
own, after a PROXY protocol v1 line naming the client's address (gunicorn's `proxy_protocol`: the app sees
the client's REMOTE_ADDR, for rate limits and logs). The response is streamed back as gunicorn writes it
(event streams too), and the client's connection closes after it (`Connection: close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ipaddress
import json
import logging
import signal
import socket
from dataclasses import dataclass
from http import HTTPStatus

log = logging.getLogger("zolve.front")

#: a request's head (request line and headers) above this is refused before gunicorn: it is far more than
#: gunicorn's own limits leave room for in practice (8,190-byte line and fields, 100 fields), which it
#: checks and refuses itself (414, 431)
MAX_HEAD_BYTES = 256 * 1024
#: headers the front sets itself on the way to gunicorn (one request per upstream connection)
HOP_BY_HOP = (b"connection", b"keep-alive", b"proxy-connection", b"expect", b"upgrade")
_PIPE_CHUNK = 64 * 1024
#: the front process's name (ps, /proc/PID/comm)
COMM = b"zolve-front"


@dataclass(frozen=True)
class FrontConfig:
    upstream: str  # gunicorn's unix socket
    header_seconds: float
    body_seconds: float
    max_body_bytes: int
    max_connections: int


class Refused(Exception):
    """The request is answered here with this status (JSON, as the API's errors) and not passed on."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


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

    def forwarded(self) -> bytes:
        """The head as gunicorn gets it: hop-by-hop headers replaced by `Connection: close`."""
        kept = [self.raw_lines[0]] + [
            line for line in self.raw_lines[1:] if line.split(b":", 1)[0].strip().lower() not in HOP_BY_HOP
        ]
        return b"\r\n".join([*kept, b"Connection: close", b"", b""])


def parse_head(raw: bytes) -> Head:
    """What the front needs of a head to read the body; anything else malformed is gunicorn's to refuse."""
    lines = raw[:-4].split(b"\r\n")
    lengths, chunked, expects = set(), False, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name, value = name.strip().lower(), value.strip()
        if name == b"content-length":
            lengths.add(value)
        elif name == b"transfer-encoding":
            chunked = chunked or value.lower().endswith(b"chunked")
        elif name == b"expect":
            expects = value.lower() == b"100-continue"
    if len(lengths) > 1 or (lengths and chunked):
        raise Refused(400, "conflicting Content-Length and Transfer-Encoding headers")
    length = None
    if lengths:
        (text,) = lengths
        if not (text.isdigit() and len(text) <= 18):
            raise Refused(400, "Content-Length must be a number of bytes")
        length = int(text)
    return Head(lines, length, chunked, expects)


async def read_chunked(reader: asyncio.StreamReader, limit: int) -> bytes:
    """A chunked body as sent (framing included), refused past `limit` bytes of data."""
    parts, size = [], 0
    while True:
        line = await reader.readuntil(b"\r\n")
        parts.append(line)
        try:
            chunk = int(line.split(b";", 1)[0].strip(), 16)
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
        parts.append(await reader.readexactly(chunk + 2))


def proxy_line(peer: object) -> bytes:
    """PROXY protocol v1: the client's address for gunicorn (REMOTE_ADDR); a unix or unknown peer is
    127.0.0.1."""
    host, port = ("127.0.0.1", 0)
    if isinstance(peer, tuple) and len(peer) >= 2:
        host, port = str(peer[0]), int(peer[1])
    address = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if address.version == 4:
        return f"PROXY TCP4 {address} 127.0.0.1 {port} 0\r\n".encode()
    return f"PROXY TCP6 {address} ::1 {port} 0\r\n".encode()


class Front:
    def __init__(self, config: FrontConfig) -> None:
        self.config = config
        self.open = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        try:
            if self.open > self.config.max_connections:
                writer.write(refusal(503, "the server has too many connections open; retry shortly"))
                return
            request = await self._read_request(reader, writer)
            if request is not None:
                await self._relay(request, writer)
        except Refused as refused:
            writer.write(refusal(refused.status, refused.message))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away
        finally:
            self.open -= 1
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.drain(), 5)
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes | None:
        try:
            raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.config.header_seconds)
        except TimeoutError:
            raise Refused(408, f"the request's headers took over {self.config.header_seconds:g} s") from None
        except asyncio.LimitOverrunError:
            raise Refused(431, f"the request's head is over {MAX_HEAD_BYTES} bytes") from None
        except asyncio.IncompleteReadError:
            return None  # closed before a whole head: nothing to answer
        head = parse_head(raw)
        if head.length is not None and head.length > self.config.max_body_bytes:
            raise Refused(413, "request body too large")
        if head.expects_continue and (head.length or head.chunked):
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            body = await asyncio.wait_for(self._read_body(reader, head), self.config.body_seconds)
        except TimeoutError:
            raise Refused(408, f"the request's body took over {self.config.body_seconds:g} s") from None
        return proxy_line(writer.get_extra_info("peername")) + head.forwarded() + body

    async def _read_body(self, reader: asyncio.StreamReader, head: Head) -> bytes:
        if head.chunked:
            return await read_chunked(reader, self.config.max_body_bytes)
        return await reader.readexactly(head.length) if head.length else b""

    async def _relay(self, request: bytes, writer: asyncio.StreamWriter) -> None:
        """Send the whole request to gunicorn and stream its answer back until it closes."""
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(self.config.upstream)
        except OSError:
            raise Refused(503, "the API is starting or restarting; retry shortly") from None
        try:
            up_writer.write(request)
            await up_writer.drain()
            # and nothing after it: whatever framing gunicorn reads, it never waits for more from us
            if up_writer.can_write_eof():
                up_writer.write_eof()
            while chunk := await up_reader.read(_PIPE_CHUNK):
                writer.write(chunk)
                await writer.drain()
        finally:
            up_writer.close()


async def serve(listener: socket.socket, config: FrontConfig) -> None:
    front = Front(config)
    server = await asyncio.start_server(front.handle, sock=listener, limit=MAX_HEAD_BYTES, backlog=2048)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()


def run(listener: socket.socket, config: FrontConfig) -> None:
    """The front's process: it ends with its parent (gunicorn's arbiter), however that ends."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        libc.prctl(15, ctypes.c_char_p(COMM))  # PR_SET_NAME: how ps and /proc/PID/comm name it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C goes to the arbiter, which stops us with it
    asyncio.run(serve(listener, config))
