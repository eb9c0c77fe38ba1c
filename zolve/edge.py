"""The API's edge: what runs between granian, which parses HTTP, and the Flask app, which answers it.

granian (its Rust server, hyper's HTTP/1.1 parser) reads every request's head and frames its body; nothing
here reads a request line, a header line or a chunk. It calls this ASGI application, which:

1. admits the request, or refuses it (503) when its client already has `max_requests_per_address`
   requests in progress in this process, or the process has `max_requests` (a client address is the peer,
   or the one ZOLVE_TRUSTED_PROXIES lets X-Forwarded-For name, as werkzeug's ProxyFix reads it);
2. checks the parsed head against the API's limits (the target's length: 414; a field's size and their
   number: 431), before anything else is done with it;
3. receives the whole body within `body_seconds` (else 408) and `max_body_bytes` (else 413), counting what
   granian passes on (chunk extensions and trailers are bounded by hyper itself), with no thread held: a
   slow client costs a coroutine, never one of the threads that answer everyone else;
4. takes its turn (zolve.fair_queue: past `capacity` requests being computed, the next place goes to the
   client that has used the least of the service's time);
5. runs the WSGI app in a thread of a pool of `threads` and passes its answer on as the app yields it
   (event streams too), each write within `write_seconds`: a client that stops reading is cut off, and the
   app's iterator is closed so that its thread goes back to the pool; the kernel resets the connection
   of a client that takes nothing for `write_seconds`, whatever granian still holds for it; a request that
   waits (an event stream between events, a long-poll, an export's turn: core.waiting) holds no thread;
6. writes one access-log record (zolve.access_log) whatever happened.

Every refusal here is the API's JSON error body. A client that goes away is one access-log record (499),
never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import io
import ipaddress
import json
import logging
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote_to_bytes

from core.waiting import CLIENT_WEIGHT, EDGE_FIGURES, PAUSABLE, RERUN, Pause, Rerun, Spooled, Wake
from zolve.access_log import AccessLog
from zolve.fair_queue import FairQueue, Place, Ticket

log = logging.getLogger("zolve.edge")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

#: what the API accepts of a request's head (gunicorn's limits, which the API documented before): the
#: target (path and query string), each header field (name and value), and how many fields
MAX_TARGET_BYTES = 8190
MAX_FIELD_BYTES = 8190
MAX_FIELDS = 100
#: the answer the app has written but the client not yet taken, past which the app's thread leaves the
#: answer, to be resumed once that is sent (a slow reader holds no thread)
MAX_UNSENT_BYTES = 256 * 1024
#: what an answer's thread "pauses" on when it leaves the answer for that reason: no wake-up to wait for
SEND_FIRST = Pause(Wake(), 0.0)
#: a body refused as too large is read on and discarded, up to this much and this long, before the 413 is
#: sent: a client that sends its whole body before reading (Python's http.client) would otherwise get a
#: connection reset instead of the answer (as nginx's lingering close does)
LINGER_BYTES = 64 * 1024 * 1024
LINGER_SECONDS = 3.0


@dataclass(frozen=True)
class EdgeConfig:
    body_seconds: float = 30.0
    max_body_bytes: int = 256 * 1024
    #: requests in progress in this process at once (reading their body, waiting their turn, computed,
    #: answered), in all and per client address; past either: 503
    max_requests: int = 8000
    max_requests_per_address: int = 400
    #: requests computed at once (zolve.servers.edge_capacity); past it, clients take turns
    capacity: int = 16
    #: a request still unanswered after this long is waiting (a long-poll), not computing: its place goes on
    hold_seconds: float = 0.1
    #: a write to the client that takes longer than this ends the response (the client stopped reading)
    write_seconds: float = 30.0
    #: threads that run the WSGI app
    threads: int = 8
    #: proxies in front whose X-Forwarded-For is believed (ZOLVE_TRUSTED_PROXIES)
    trusted_proxies: int = 0
    #: the edge serves this process's own sockets (granian's): the kernel resets a connection whose client
    #: takes nothing for write_seconds (limit_unsent_time)
    own_sockets: bool = False


class Refused(Exception):
    """The request is answered here with this status and message (the API's JSON error body)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class ClientGone(Exception):
    """The client disconnected, or stopped reading for longer than the write deadline."""


#: reason phrases as granian's status line gives them, where Python's differ
_PHRASES = {413: "Payload Too Large", 414: "URI Too Long"}


def refusal_body(status: int, message: str) -> bytes:
    """The API's JSON error body (api.errors), for the edge's own refusals."""
    phrase = _PHRASES.get(status) or HTTPStatus(status).phrase
    return json.dumps({"code": status, "status": phrase, "message": message}).encode()


def client_address(scope: Scope, trusted_proxies: int) -> str:
    """The request's client: the peer, or behind `trusted_proxies` proxies the address they name in
    X-Forwarded-For, `trusted_proxies` hops from its right (as werkzeug's ProxyFix reads it, which the app
    uses); an IPv4-mapped IPv6 address in its IPv4 form."""
    peer = scope.get("client")
    address = str(peer[0]) if peer else "127.0.0.1"
    if trusted_proxies > 0:
        forwarded = b",".join(value for name, value in scope["headers"] if name == b"x-forwarded-for")
        hops = [hop.strip() for hop in forwarded.decode("latin-1").split(",") if hop.strip()]
        if len(hops) >= trusted_proxies:
            address = hops[-trusted_proxies]
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address[:64]
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped:
        parsed = parsed.ipv4_mapped
    return str(parsed)


def address_group(address: str) -> str:
    """What the per-address caps and fair turns count as one client: the address, or an IPv6 address's
    /64 (one host commonly holds a whole /64, so its addresses are not many clients)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return address


def request_line(scope: Scope) -> bytes:
    """The request as the access log names it: method, target and version."""
    target = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    return b"%s %s HTTP/%s" % (scope["method"].encode("latin-1"), target, scope["http_version"].encode())


def check_head(scope: Scope) -> None:
    """The API's limits on a parsed head: Refused (400, 414, 431, 501) past them."""
    query = scope.get("query_string") or b""
    target = len(scope.get("raw_path") or scope["path"]) + (len(query) + 1 if query else 0)
    if target > MAX_TARGET_BYTES:
        raise Refused(
            414, f"the request line (method, URL and query string) is longer than {MAX_TARGET_BYTES} bytes"
        )
    headers = scope["headers"]
    if len(headers) > MAX_FIELDS or any(len(name) + len(value) > MAX_FIELD_BYTES for name, value in headers):
        raise Refused(
            431, f"a header is over {MAX_FIELD_BYTES} bytes, or the request has over {MAX_FIELDS} headers"
        )
    if scope["http_version"] == "1.1" and sum(1 for name, _ in headers if name == b"host") != 1:
        raise Refused(400, "an HTTP/1.1 request has exactly one Host header")
    codings = [
        coding.strip().lower()
        for name, value in headers
        if name == b"transfer-encoding"
        for coding in value.split(b",")
    ]
    if any(coding != b"chunked" for coding in codings):
        raise Refused(501, "the only transfer coding this server takes is chunked")


def wsgi_environ(scope: Scope, body: bytes) -> dict[str, Any]:
    """The WSGI environ of a request whose body was received whole (PEP 3333). Header names with `_` are
    dropped, as gunicorn and nginx drop them: WSGI reads `_` as `-`, so `X_Forwarded_For` would pose as
    another header. The body's framing is gone: the app sees its length."""
    raw_path = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    server = scope.get("server") or ("localhost", 80)
    peer = scope.get("client") or ("127.0.0.1", 0)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(raw_path).decode("latin-1"),
        "QUERY_STRING": (scope.get("query_string") or b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1] or 0),
        "SERVER_PROTOCOL": f"HTTP/{scope['http_version']}",
        "REMOTE_ADDR": str(peer[0]),
        "REMOTE_PORT": str(peer[1]),
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for name, value in scope["headers"]:
        if b"_" in name or name in (b"content-length", b"transfer-encoding"):
            continue
        key = name.decode("latin-1").upper().replace("-", "_")
        if key not in ("CONTENT_TYPE",):
            key = "HTTP_" + key
        text = value.decode("latin-1")
        environ[key] = f"{environ[key]},{text}" if key in environ else text
    return environ


class Outbox:
    """An answer passed from the app's thread to the event loop: its status and headers, then its body's
    chunks. Once MAX_UNSENT_BYTES are not yet sent the thread leaves the answer (SEND_FIRST) and the event
    loop resumes it in a thread when they are: a client that reads slowly holds no thread. The thread is
    stopped (ClientGone, raised in it) once the client has gone, so that the app's iterator is closed. A
    streamed answer that pauses (core.waiting.Pause) leaves its iterator here for the event loop to resume;
    a spooled one (core.waiting.Spooled) is handed over whole, for the event loop to send."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.start: tuple[int, list[tuple[bytes, bytes]]] | None = None
        self.chunks: list[bytes] = []
        self.unsent = 0
        self.done = False
        self.gone = False
        self.waiting = False
        self.ready = asyncio.Event()
        #: the app's answer and its iterator, while it is being passed on; the thread passing it on
        self.answer: Iterable[Any] | None = None
        self.iterator: Iterator[Any] = iter(())
        self.running: asyncio.Future[None] = loop.create_future()
        self.running.set_result(None)
        self.environ: dict[str, Any] = {}
        #: set by the app's thread: the answer paused (its iterator left open), or was spooled whole
        self.paused: Pause | None = None
        self.spooled: Spooled | None = None

    # the app's thread
    def start_response(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        if exc_info is not None and self.start is not None:
            raise exc_info[1].with_traceback(exc_info[2])
        code = int(status.split(" ", 1)[0])
        encoded = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        with self.lock:
            self.start = (code, encoded)
        return self.put

    def put(self, chunk: bytes) -> None:
        if not chunk:
            return
        with self.lock:
            if self.gone:
                raise ClientGone
            self.chunks.append(chunk)
            self.unsent += len(chunk)
            self._wake()

    def backlogged(self) -> bool:
        """Whether more than MAX_UNSENT_BYTES wait to be sent (the thread should leave the answer)."""
        with self.lock:
            return self.unsent > MAX_UNSENT_BYTES

    def pause(self, pause: Pause) -> None:
        with self.lock:
            self.paused = pause
            self._wake()

    def hand_over(self, spooled: Spooled) -> None:
        with self.lock:
            self.spooled = spooled
            self.done = True
            self._wake()

    def finish(self) -> None:
        with self.lock:
            self.done = True
            self._wake()

    def close_answer(self) -> None:
        """Close the app's answer (its thread, or one that resumes it, in the request's context)."""
        close = getattr(self.answer, "close", None)
        self.answer, self.iterator = None, iter(())
        if close is not None:
            with contextlib.suppress(Exception):
                close()

    def _wake(self) -> None:
        if self.waiting:
            self.waiting = False
            self.loop.call_soon_threadsafe(self.ready.set)

    # the event loop
    async def take(self) -> tuple[list[bytes], bool, Pause | None]:
        """The chunks written since the last take, whether the answer is complete, and whether it paused;
        waits for one of them. ClientGone once the answer was abandoned."""
        while True:
            with self.lock:
                if self.gone:
                    raise ClientGone
                chunks, self.chunks, self.unsent = self.chunks, [], 0
                paused, self.paused = self.paused, None
                if chunks or self.done or paused:
                    return chunks, self.done, paused
                self.waiting = True
                self.ready.clear()
            await self.ready.wait()

    def abandon(self) -> None:
        """The client has gone (or the request ended): the app's thread stops at its next write, and a
        take waiting on the event loop (where this is called) raises ClientGone."""
        with self.lock:
            self.gone = True
        self.ready.set()


@dataclass
class Outcome:
    """What the client was answered, for the access log: 499 until a response's head went to it."""

    status: int = 499
    size: int = 0
    #: the answer's last byte went to the client
    complete: bool = False
    #: the body's length as its Content-Length promised (None: not given, or a HEAD's)
    promised: int | None = None

    def sent(self, size: int) -> None:
        """`size` more bytes of the body went to the client; once they are all it was promised, the answer
        is whole even if the end of the exchange (granian's last, empty message) finds the client gone:
        a client that has every byte it was told of may well close first."""
        self.size += size
        if self.promised is not None and self.size >= self.promised:
            self.complete = True


class Edge:
    """The ASGI application granian calls (zolve.servers.serve_api makes one per process)."""

    def __init__(self, app: WsgiApp, config: EdgeConfig, access_log: AccessLog | None = None) -> None:
        self.app, self.config, self.access_log = app, config, access_log
        self.pool = ThreadPoolExecutor(config.threads, thread_name_prefix="zolve-app")
        self.turns: FairQueue | None = None  # made on the loop that serves
        self.in_progress: dict[str, int] = {}
        self.total = 0
        #: requests refused for the process's cap and for their address's; requests waiting (core.waiting)
        self.refused = {"process": 0, "address": 0}
        self.waiting = 0
        #: the kernel's write deadline is set on this process's sockets (limit_unsent_time)
        self.deadline_set = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.serve(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self.lifespan(receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.access_log is not None:
                    self.access_log.close()
                self.pool.shutdown(wait=False, cancel_futures=True)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.config.own_sockets and not self.deadline_set:  # its listening socket is here once it serves
            self.deadline_set = True
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, limit_unsent_time, self.config.write_seconds, scope)
        client = client_address(scope, self.config.trusted_proxies)
        group = address_group(client)
        outcome = Outcome()
        try:
            with self.admitted(group):
                check_head(scope)
                body = await self.read_body(scope, receive)
                await self.answer(scope, body, group, receive, send, outcome)
        except Refused as refused:
            with contextlib.suppress(Exception):
                await self.refuse(send, refused, outcome)
        except (ClientGone, OSError, RuntimeError) as error:
            if not isinstance(error, ClientGone):
                log.info("the client %s went away: %s", client, error)
            if not outcome.complete:
                outcome.status = 499  # whatever its head said, the client did not get the whole answer
        finally:
            if self.access_log is not None:
                self.access_log.record(
                    client,
                    request_line(scope),
                    outcome.status,
                    outcome.size,
                    _header(scope, b"referer"),
                    _header(scope, b"user-agent"),
                )

    @contextlib.contextmanager
    def admitted(self, client: str) -> Iterator[None]:
        count = self.in_progress.get(client, 0)
        if self.total >= self.config.max_requests:
            self.refused["process"] += 1
            raise Refused(503, "the server has too many requests in progress; retry shortly")
        if count >= self.config.max_requests_per_address:
            self.refused["address"] += 1
            raise Refused(503, "this address has too many requests in progress; retry shortly")
        self.in_progress[client] = count + 1
        self.total += 1
        try:
            yield
        finally:
            self.total -= 1
            if (left := self.in_progress[client] - 1) > 0:
                self.in_progress[client] = left
            else:
                del self.in_progress[client]

    async def read_body(self, scope: Scope, receive: Receive) -> bytes:
        limit = self.config.max_body_bytes
        declared = _header(scope, b"content-length")
        if declared.isdigit() and int(declared) > limit:
            # a client that waits for 100 Continue is refused before it sends a byte (reading would
            # invite the body); another's body is read on, a while, for it to see the answer
            if _header(scope, b"expect").lower() != b"100-continue":
                await _discard_rest(receive)
            raise Refused(413, "request body too large")
        parts: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.config.body_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        # granian ends a body it cannot frame (a malformed chunk) as it ends one whose
                        # client went away; a body of a declared length has no framing to get wrong
                        if declared.isdigit():
                            raise ClientGone
                        raise Refused(400, "the request's body is malformed, or ended before its end")
                    part = message.get("body", b"")
                    size += len(part)
                    if size > limit:
                        if message.get("more_body", False):
                            await _discard_rest(receive)
                        raise Refused(413, "request body too large")
                    parts.append(part)
                    if not message.get("more_body", False):
                        return b"".join(parts)
        except TimeoutError:
            raise Refused(408, f"the request's body took over {self.config.body_seconds:g} s") from None

    async def answer(
        self, scope: Scope, body: bytes, client: str, receive: Receive, send: Send, outcome: Outcome
    ) -> None:
        """Run the app in its client's turn and pass its answer on; while the request waits (a rerun it
        asked for, core.waiting), it holds no thread, only this coroutine."""
        context = contextvars.Context()  # the request's: a paused answer resumes in any of the threads
        rerun = Rerun(arrived=time.monotonic())
        gone = Gone()
        watcher = asyncio.get_running_loop().create_task(_watch_disconnect(receive, gone))
        try:
            while True:
                asked = await self._run(scope, body, client, context, rerun, gone, send, outcome)
                if asked is None:
                    return
                rerun.asked = None
                await self._waiting(asked, gone)
        finally:
            watcher.cancel()
            rerun.end()

    async def _run(
        self,
        scope: Scope,
        body: bytes,
        client: str,
        context: contextvars.Context,
        rerun: Rerun,
        gone: Gone,
        send: Send,
        outcome: Outcome,
    ) -> Pause | None:
        """One run of the app in its client's turn, its answer passed on; the rerun it asked for, if any."""
        if self.turns is None:
            self.turns = FairQueue(self.config.capacity)
        ticket = await self.turns.enter(client, hash(_header(scope, b"authorization")))
        place = Place(self.turns, ticket, self.config.hold_seconds)
        loop = asyncio.get_running_loop()
        outbox = Outbox(loop)
        environ = wsgi_environ(scope, body)
        environ[PAUSABLE], environ[RERUN], environ[EDGE_FIGURES] = True, rerun, self.figures
        environ[CLIENT_WEIGHT] = functools.partial(_weigh, loop, self.turns, ticket)
        outbox.running = loop.run_in_executor(self.pool, context.run, self._run_app, environ, outbox)
        gone.outbox = outbox
        if gone.is_set():
            outbox.abandon()
        try:
            return await self._relay(scope, outbox, place, send, outcome, rerun, context, gone)
        finally:
            place.give_back()
            outbox.abandon()
            await asyncio.wait([outbox.running])  # the thread has stopped: nothing of it outlives the request
            if outbox.spooled is not None:
                outbox.spooled.close()
            if outbox.answer is not None:  # paused when the client went: closed in the request's context
                await loop.run_in_executor(self.pool, context.run, outbox.close_answer)

    def _run_app(self, environ: dict[str, Any], outbox: Outbox) -> None:
        outbox.environ = environ
        try:
            answer = self.app(environ, outbox.start_response)
        except Exception:
            self._failed(environ, outbox)
            outbox.finish()
            return
        if isinstance(answer, Spooled):
            outbox.hand_over(answer)
            return
        outbox.answer, outbox.iterator = answer, iter(answer)
        self._drain(outbox)

    def _drain(self, outbox: Outbox) -> None:
        """Pass the answer's chunks on, until it ends or pauses (its iterator then stays open)."""
        try:
            for chunk in outbox.iterator:
                if isinstance(chunk, Pause):
                    outbox.pause(chunk)
                    return
                outbox.put(chunk)
                if outbox.backlogged():
                    outbox.pause(SEND_FIRST)
                    return
        except ClientGone:
            pass
        except Exception:
            self._failed(outbox.environ, outbox)
        outbox.close_answer()
        outbox.finish()

    @staticmethod
    def _failed(environ: dict[str, Any], outbox: Outbox) -> None:
        log.exception("the app failed on %s %s", environ["REQUEST_METHOD"], environ["PATH_INFO"])
        if outbox.start is None:
            with contextlib.suppress(ClientGone):
                outbox.start_response("500 Internal Server Error", [("Content-Type", "application/json")])
                outbox.put(refusal_body(500, "the server failed to answer; the failure is logged"))

    async def _relay(
        self,
        scope: Scope,
        outbox: Outbox,
        place: Place,
        send: Send,
        outcome: Outcome,
        rerun: Rerun,
        context: contextvars.Context,
        gone: asyncio.Event,
    ) -> Pause | None:
        started = False
        loop = asyncio.get_running_loop()
        while True:
            chunks, done, paused = await outbox.take()
            if not started:
                if rerun.asked is not None:
                    return rerun.asked  # this run's answer is dropped: the request runs again
                if outbox.start is None:
                    raise RuntimeError("the app answered without starting a response")
                place.give_back()  # computed: what is left is passing the body on
                status, headers = outbox.start
                await self._send(send, {"type": "http.response.start", "status": status, "headers": headers})
                outcome.status, started = status, True
                outcome.promised = None if scope["method"] == "HEAD" else _promised(headers)
                outcome.sent(0)
            body = b"" if scope["method"] == "HEAD" else b"".join(chunks)
            last = done and outbox.spooled is None
            if body or last:
                await self._send(send, {"type": "http.response.body", "body": body, "more_body": not last})
                outcome.sent(len(body))
            if last:
                outcome.complete = True
                return None
            if done and outbox.spooled is not None:
                if scope["method"] != "HEAD":
                    await self._send_spooled(send, outbox.spooled, outcome)
                await self._send(send, {"type": "http.response.body", "body": b"", "more_body": False})
                outcome.complete = True
                return None
            if paused is not None:
                if paused is not SEND_FIRST:  # (what it left to send is sent by now)
                    await self._waiting(paused, gone)
                await asyncio.wait([outbox.running])  # its thread has left the request's context
                outbox.running = loop.run_in_executor(self.pool, context.run, self._drain, outbox)

    async def _waiting(self, pause: Pause, gone: asyncio.Event) -> None:
        self.waiting += 1
        try:
            await _wait_for(pause, gone)
        finally:
            self.waiting -= 1

    def figures(self) -> list[tuple[str, str, float]]:
        """What this process's edge reports at /metrics: (name, help, value)."""
        return [
            (
                "zolve_edge_requests_in_progress",
                "Requests admitted by this API process, not yet answered",
                self.total,
            ),
            (
                "zolve_edge_requests_limit",
                "Requests this API process admits at once (ZOLVE_MAX_REQUESTS)",
                self.config.max_requests,
            ),
            (
                "zolve_edge_addresses",
                "Client addresses (IPv6: /64s) with requests in progress here",
                len(self.in_progress),
            ),
            (
                "zolve_edge_waiting",
                "Requests waiting here with no thread (streams between events, long-polls)",
                self.waiting,
            ),
            (
                "zolve_edge_refused_process_total",
                "Requests refused (503) at this process's cap",
                self.refused["process"],
            ),
            (
                "zolve_edge_refused_address_total",
                "Requests refused (503) at their address's cap",
                self.refused["address"],
            ),
        ]

    async def _send_spooled(self, send: Send, spooled: Spooled, outcome: Outcome) -> None:
        """A body read whole before (its rows' snapshot let go): sent from here, holding no thread."""
        while chunk := spooled.read():
            await self._send(send, {"type": "http.response.body", "body": chunk, "more_body": True})
            outcome.sent(len(chunk))

    async def _send(self, send: Send, message: Message) -> None:
        try:
            async with asyncio.timeout(self.config.write_seconds):
                await send(message)
        except TimeoutError:
            raise ClientGone from None

    async def refuse(self, send: Send, refused: Refused, outcome: Outcome) -> None:
        body = refusal_body(refused.status, refused.message)
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        if refused.status == 503:
            headers.append((b"retry-after", b"1"))
        await self._send(send, {"type": "http.response.start", "status": refused.status, "headers": headers})
        await self._send(send, {"type": "http.response.body", "body": body})
        outcome.status, outcome.size, outcome.complete = refused.status, len(body), True


def limit_unsent_time(seconds: float, scope: Scope) -> int:
    """Have the kernel reset a connection whose client takes none of what it is sent for `seconds` (a
    zero window, unacknowledged data: TCP_USER_TIMEOUT), on this process's listening sockets (their
    connections inherit it) and on the request's own connection (accepted before). granian has no write
    deadline of its own: it keeps such a connection, its answer queued in the kernel, as long as the
    client likes. The sockets are this process's own, among its descriptors (Linux's /proc/self/fd); how
    many were set."""
    if not hasattr(socket, "TCP_USER_TIMEOUT") or not os.path.isdir("/proc/self/fd"):
        return 0
    client, server = scope.get("client"), scope.get("server")
    ends = ((str(client[0]), int(client[1])), (str(server[0]), int(server[1]))) if client and server else None
    count = 0
    for sock in _own_tcp_sockets():
        with contextlib.suppress(OSError):
            listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
            if listening or (sock.getpeername()[:2], sock.getsockname()[:2]) == ends:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, int(seconds * 1000))
                count += 1
    return count


def _own_tcp_sockets() -> Iterator[socket.socket]:
    """Each TCP socket of this process, as a socket object of its own (closed after use; the socket
    itself stays open)."""
    for name in os.listdir("/proc/self/fd"):
        try:
            if not stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                continue
            sock = socket.socket(fileno=os.dup(int(name)))
        except (OSError, ValueError):
            continue
        try:
            if sock.type == socket.SOCK_STREAM and sock.family in (socket.AF_INET, socket.AF_INET6):
                yield sock
        finally:
            sock.close()


async def _discard_rest(receive: Receive) -> None:
    """Read what is left of a refused body, keeping none of it, within LINGER_BYTES and LINGER_SECONDS."""
    discarded = 0
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(LINGER_SECONDS):
            while discarded < LINGER_BYTES:
                message = await receive()
                discarded += len(message.get("body", b""))
                if message["type"] != "http.request" or not message.get("more_body", False):
                    return


class Gone(asyncio.Event):
    """Set once the client has gone; abandons the answer being passed on then (its `outbox`)."""

    outbox: Outbox | None = None

    def set(self) -> None:
        super().set()
        if self.outbox is not None:
            self.outbox.abandon()


async def _watch_disconnect(receive: Receive, gone: Gone) -> None:
    """Set `gone` once the client has gone (the request's body was received whole before)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


async def _wait_for(pause: Pause, gone: asyncio.Event) -> None:
    """Wait for a paused answer's or a rerun's wake-up, or its timeout; ClientGone once `gone` is set."""
    woken = asyncio.ensure_future(pause.wake.wait_async(pause.timeout))
    ended = asyncio.ensure_future(gone.wait())
    _, pending = await asyncio.wait({woken, ended}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    if gone.is_set():
        raise ClientGone


def _promised(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    """The body length a response's head promises, if it gives one."""
    for key, value in headers:
        if key == b"content-length" and value.isdigit():
            return int(value)
    return None


def _header(scope: Scope, name: bytes) -> bytes:
    headers: Iterable[tuple[bytes, bytes]] = scope["headers"]
    for key, value in headers:
        if key == name:
            return value
    return b""


def _weigh(loop: asyncio.AbstractEventLoop, turns: FairQueue, ticket: Ticket, weight: float) -> None:
    """The app's word (from its thread) on the weight of a request's credential; the turns learn it on
    their loop, only when it changed (most requests cost no wake-up of the loop)."""
    if turns.weight_of(ticket) != weight:
        loop.call_soon_threadsafe(turns.weigh, ticket, weight)
