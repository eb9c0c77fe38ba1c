"""zolve.edge, in-process: what it does between granian (which parses HTTP) and the WSGI app. The app here
is a stand-in that records what it got; granian's side is played by `receive` and `send` callables as
granian calls them. The same edge against a real `zolve api` is tests/security/test_edge.py."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import io
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from core.waiting import Spooled, Wake, pause, rerun_of
from tests.loops import run_on_own_loop, until
from zolve.edge import MAX_TARGET_BYTES, Edge, EdgeConfig, address_group, client_address, wsgi_environ

CONFIG = EdgeConfig(body_seconds=0.5, max_body_bytes=1000, write_seconds=0.5, threads=4, capacity=4)


def scope(
    path: str = "/jobs",
    method: str = "POST",
    headers: list[tuple[bytes, bytes]] | None = None,
    client: tuple[str, int] = ("10.0.0.1", 5000),
    query: bytes = b"",
) -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "headers": headers if headers is not None else [(b"host", b"x")],
        "client": client,
        "server": ("127.0.0.1", 8000),
        "scheme": "http",
    }


class Recorder:
    """A WSGI app that answers `answer` (chunks) after recording the environ and body it got."""

    def __init__(self, answer: Callable[[], Iterable[bytes]] | None = None) -> None:
        self.calls: list[tuple[dict[str, Any], bytes]] = []
        self.answer = answer or (lambda: [b"ok"])

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        self.calls.append((environ, environ["wsgi.input"].read()))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return self.answer()


def body_messages(*parts: bytes, pause: float = 0.0) -> Callable[[], Any]:
    """granian's receive: the body in these parts (each after `pause`), then a wait for the disconnect."""
    queue = [
        {"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
        for i, part in enumerate(parts)
    ]

    async def receive() -> dict[str, Any]:
        if queue:
            await asyncio.sleep(pause)
            return queue.pop(0)
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    return receive


def serve(
    app: Any, request: dict[str, Any], receive: Callable[[], Any], config: EdgeConfig = CONFIG
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One request through a new edge: the status, headers and body sent."""
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def scenario() -> None:
        await Edge(app, config).serve(request, receive, send)

    run_on_own_loop(scenario(), timeout=20)
    start = sent[0]
    body = b"".join(message.get("body", b"") for message in sent[1:])
    return start["status"], dict(start["headers"]), body


def goes_away_after(seconds: float) -> Callable[[], Any]:
    """granian's receive for a client that sent an empty body and goes away `seconds` later."""
    delivered = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if delivered:
            return delivered.pop()
        await asyncio.sleep(seconds)
        return {"type": "http.disconnect"}

    return receive


def held_request(edge: Edge, address: str, release: asyncio.Event, answers: list[tuple[str, int]]) -> Any:
    """A request from `address` whose body comes once `release` is set; its status goes to `answers`."""
    delivered = False

    async def slow_body() -> dict[str, Any]:
        nonlocal delivered
        await release.wait()
        if delivered:  # then the wait for a disconnect, which does not come
            await asyncio.sleep(3600)
        delivered = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answers.append((address, message["status"]))

    return edge.serve(scope(client=(address, 1)), slow_body, send)


def test_the_app_gets_the_whole_body_as_one_with_its_length_and_no_framing() -> None:
    app = Recorder()
    headers = [(b"host", b"x"), (b"transfer-encoding", b"chunked"), (b"content-type", b"application/json")]
    status, _, body = serve(app, scope(headers=headers), body_messages(b'{"a"', b": 1", b"}", pause=0.01))
    assert (status, body) == (200, b"ok")
    ((environ, received),) = app.calls
    assert received == b'{"a": 1}' and environ["CONTENT_LENGTH"] == "8"
    assert "HTTP_TRANSFER_ENCODING" not in environ and environ["CONTENT_TYPE"] == "application/json"


def test_a_declared_body_over_the_limit_is_refused_read_only_to_be_discarded() -> None:
    """The rest is read and dropped before the 413 (a client that sends all before it reads gets the
    answer, not a reset), and the app never runs."""
    app = Recorder()
    parts = [b"x" * 1000] * 5
    status, headers, body = serve(
        app, scope(headers=[(b"host", b"x"), (b"content-length", b"5000")]), body_messages(*parts)
    )
    assert status == 413 and headers[b"content-type"] == b"application/json"
    assert json.loads(body)["code"] == 413 and not app.calls


def test_a_body_that_grows_past_the_limit_is_refused_and_the_app_never_runs() -> None:
    app = Recorder()
    status, _, body = serve(app, scope(), body_messages(b"x" * 600, b"x" * 600))
    assert status == 413 and "too large" in json.loads(body)["message"] and not app.calls


def test_a_body_slower_than_its_deadline_is_a_408_and_takes_no_thread() -> None:
    app = Recorder()
    started = time.monotonic()
    status, _, body = serve(app, scope(), body_messages(b"a", b"b", b"c", pause=0.3))
    assert status == 408 and "0.5 s" in json.loads(body)["message"] and not app.calls
    assert time.monotonic() - started < 2


def test_a_body_granian_ends_early_is_a_400_and_the_app_never_runs() -> None:
    app = Recorder()
    parts = iter([{"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}])

    async def receive() -> dict[str, Any]:
        return next(parts)

    status, _, body = serve(app, scope(), receive)
    assert status == 400 and json.loads(body)["code"] == 400 and not app.calls


@pytest.mark.parametrize(
    ("request_scope", "status", "says"),
    [
        (scope(path="/" + "a" * 9000, method="GET"), 414, "8190 bytes"),
        (scope(query=b"q=" + b"a" * 9000, method="GET"), 414, "8190 bytes"),
        (scope(headers=[(b"x-big", b"a" * 9000)], method="GET"), 431, "over 8190 bytes"),
        (scope(headers=[(b"x-%d" % n, b"1") for n in range(101)], method="GET"), 431, "over 100 headers"),
    ],
    ids=["long path", "long query", "long field", "many fields"],
)
def test_heads_past_the_limits_are_refused_in_json(request_scope: dict, status: int, says: str) -> None:
    app = Recorder()
    got, headers, body = serve(app, request_scope, body_messages(b""))
    assert got == status and says in json.loads(body)["message"] and not app.calls
    assert headers[b"connection"] == b"close"


def test_header_names_with_an_underscore_never_reach_the_app() -> None:
    app = Recorder()
    headers = [(b"host", b"x"), (b"x_forwarded_for", b"6.6.6.6"), (b"x-real", b"1")]
    headers += [(b"accept", b"a"), (b"accept", b"b")]
    serve(app, scope(headers=headers, method="GET"), body_messages(b""))
    ((environ, _),) = app.calls
    assert "HTTP_X_FORWARDED_FOR" not in environ and environ["HTTP_X_REAL"] == "1"
    assert environ["HTTP_ACCEPT"] == "a,b"


def test_the_path_reaches_the_app_percent_decoded_byte_for_byte() -> None:
    environ = wsgi_environ({**scope(method="GET"), "raw_path": b"/jobs/%ff%20x"}, b"")
    assert environ["PATH_INFO"] == "/jobs/\xff x"
    assert environ["REMOTE_ADDR"] == "10.0.0.1" and environ["wsgi.input"].read() == b""


def test_the_client_is_the_peer_unless_trusted_proxies_name_it() -> None:
    forwarded = scope(headers=[(b"x-forwarded-for", b"6.6.6.6, 203.0.113.7")], client=("10.0.0.9", 1))
    assert client_address(forwarded, trusted_proxies=0) == "10.0.0.9"
    assert client_address(forwarded, trusted_proxies=1) == "203.0.113.7"
    assert client_address(forwarded, trusted_proxies=2) == "6.6.6.6"
    assert client_address(forwarded, trusted_proxies=3) == "10.0.0.9"  # fewer hops than proxies
    assert client_address(scope(client=("::ffff:127.0.0.1", 1)), 0) == "127.0.0.1"


def test_one_address_past_its_share_of_requests_is_refused_while_others_are_served() -> None:
    config = EdgeConfig(max_requests_per_address=2, max_requests=3, body_seconds=5)
    app = Recorder()
    answers: list[tuple[str, int]] = []

    async def scenario() -> None:
        edge = Edge(app, config)
        release = asyncio.Event()

        def request(address: str) -> Any:
            return held_request(edge, address, release, answers)

        held = [asyncio.create_task(request("10.0.0.66")) for _ in range(2)]
        await until(lambda: edge.total == 2, what="both admitted")
        await request("10.0.0.66")  # a third from the same address: refused at once
        other = asyncio.create_task(request("10.0.0.7"))
        await until(lambda: edge.total == 3, what="the other address admitted")
        await request("10.0.0.8")  # past the total
        release.set()
        await asyncio.gather(*held, other)

    run_on_own_loop(scenario(), timeout=20)
    assert answers[:2] == [("10.0.0.66", 503), ("10.0.0.8", 503)]
    assert sorted(answers[2:]) == [("10.0.0.66", 200), ("10.0.0.66", 200), ("10.0.0.7", 200)]


def test_a_client_that_stops_reading_is_cut_off_and_the_app_thread_freed() -> None:
    closed = threading.Event()

    def endless() -> Iterable[bytes]:
        try:
            while True:
                yield b"x" * 65536
        finally:
            closed.set()

    stalled = asyncio.Event()  # never set: the client takes nothing

    async def scenario() -> float:
        sent = 0

        async def send(message: dict[str, Any]) -> None:
            nonlocal sent
            sent += 1
            if sent > 3:
                await stalled.wait()

        started = time.monotonic()
        await Edge(Recorder(endless), CONFIG).serve(scope(method="GET"), body_messages(b""), send)
        return time.monotonic() - started

    took = run_on_own_loop(scenario(), timeout=20)
    assert closed.wait(5), "the app's iterator was closed"
    assert CONFIG.write_seconds <= took < CONFIG.write_seconds + 2


def test_a_client_that_goes_away_mid_stream_ends_the_stream() -> None:
    closed = threading.Event()

    def stream() -> Iterable[bytes]:
        try:
            while True:
                yield b"data: tick\n\n"
                time.sleep(0.05)
        finally:
            closed.set()

    async def scenario() -> None:
        receive = goes_away_after(0.3)

        async def send(message: dict[str, Any]) -> None:
            pass

        await Edge(Recorder(stream), CONFIG).serve(scope(method="GET"), receive, send)

    run_on_own_loop(scenario(), timeout=20)
    assert closed.wait(5)


def test_an_app_that_fails_answers_a_json_500_without_its_traceback() -> None:
    def failing(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        raise RuntimeError("secret detail")

    status, headers, body = serve(failing, scope(method="GET"), body_messages(b""))
    assert status == 500 and headers[b"content-type"] == b"application/json"
    assert b"secret detail" not in body and json.loads(body)["code"] == 500


def test_past_its_capacity_a_request_waits_for_a_place() -> None:
    """With one place, the second request is computed only once the first has given its place back."""
    order: list[str] = []
    gate = threading.Event()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        order.append(environ["PATH_INFO"] + " in")
        if environ["PATH_INFO"] == "/first":
            gate.wait(5)
        order.append(environ["PATH_INFO"] + " out")
        start_response("200 OK", [])
        return [b""]

    config = EdgeConfig(capacity=1, hold_seconds=10, threads=4)

    async def scenario() -> None:
        edge = Edge(app, config)

        async def send(message: dict[str, Any]) -> None:
            pass

        first = asyncio.create_task(edge.serve(scope("/first", "GET"), body_messages(b""), send))
        await until(lambda: order == ["/first in"], what="the first request in the app")
        second = asyncio.create_task(
            edge.serve(scope("/second", "GET", client=("10.0.0.2", 1)), body_messages(b""), send)
        )
        await until(lambda: edge.turns is not None and bool(edge.turns.waiting), what="the second waiting")
        gate.set()
        await asyncio.gather(first, second)

    run_on_own_loop(scenario(), timeout=20)
    assert order == ["/first in", "/first out", "/second in", "/second out"]


def _collect() -> tuple[list[dict[str, Any]], Callable[[dict[str, Any]], Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    return sent, send


def _body(sent: list[dict[str, Any]]) -> bytes:
    return b"".join(message.get("body", b"") for message in sent[1:])


def test_paused_streams_hold_no_thread_and_each_resumes_when_woken() -> None:
    """Ten streams on two threads: each sends its first part, pauses (core.waiting), and sends the rest
    once its own wake-up is set; a paused stream leaves its thread to the others."""
    wakes = [Wake() for _ in range(10)]
    resumed_in: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[Any]:
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        wake = wakes[int(environ["PATH_INFO"].rsplit("/", 1)[1])]

        def stream() -> Iterator[Any]:
            yield b"first;"
            woken = yield from pause(environ, wake, 30)
            resumed_in.append(threading.current_thread().name)
            yield b"woken;" if woken else b"timed out;"

        return stream()

    async def scenario() -> list[bytes]:
        edge = Edge(app, EdgeConfig(threads=2, capacity=2))
        outputs = [_collect() for _ in wakes]
        served = [
            asyncio.create_task(
                edge.serve(scope(f"/s/{i}", "GET", client=(f"10.0.0.{i}", 1)), body_messages(b""), send)
            )
            for i, (_, send) in enumerate(outputs)
        ]
        deadline = asyncio.get_running_loop().time() + 10
        while not all(_body(sent) == b"first;" for sent, _ in outputs):  # each paused, on two threads
            assert asyncio.get_running_loop().time() < deadline, "every stream started on two threads"
            await asyncio.sleep(0.05)
        for wake in wakes:
            wake.set()
        await asyncio.wait_for(asyncio.gather(*served), 10)
        return [_body(sent) for sent, _ in outputs]

    assert run_on_own_loop(scenario(), timeout=20) == [b"first;woken;"] * 10
    assert {name.startswith("zolve-app") for name in resumed_in} == {True}


def test_a_paused_stream_whose_client_goes_away_is_closed_in_its_context() -> None:
    closed: list[bool] = []
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker")

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[Any]:
        start_response("200 OK", [])
        marker.set("this request's")

        def stream() -> Iterator[Any]:
            try:
                yield b"first"
                yield from pause(environ, Wake(), 60)
            finally:
                closed.append(marker.get(None) == "this request's")

        return stream()

    async def scenario() -> None:
        receive = goes_away_after(0.3)

        sent, send = _collect()
        await asyncio.wait_for(Edge(app, CONFIG).serve(scope(method="GET"), receive, send), 5)

    run_on_own_loop(scenario(), timeout=20)
    assert closed == [True], "closed once, in the context the request's code set"


def test_a_request_that_asks_to_run_again_sends_only_its_last_answer_and_holds_no_thread() -> None:
    """Eight long-polls on one thread: each run asks to run again (core.waiting.Rerun) until its wake-up
    has been set twice; only the last run's answer is sent, and the request's endings run once."""
    wake = Wake()
    runs: dict[str, int] = {}
    ended: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ["PATH_INFO"]
        rerun = rerun_of(environ)
        assert rerun is not None
        runs[path] = runs.get(path, 0) + 1
        if runs[path] == 1:
            rerun.on_end(lambda: ended.append(path))
        if runs[path] < 3:
            rerun.ask(wake, 30)
            start_response("204 No Content", [])
            return [b""]
        start_response("200 OK", [])
        return [f"{path} after {runs[path]} runs".encode()]

    async def scenario() -> list[tuple[int, bytes]]:
        edge = Edge(app, EdgeConfig(threads=1, capacity=1))
        outputs = [_collect() for _ in range(8)]
        served = [
            asyncio.create_task(
                edge.serve(scope(f"/p{i}", "GET", client=(f"10.0.1.{i}", 1)), body_messages(b""), send)
            )
            for i, (_, send) in enumerate(outputs)
        ]

        def settled(done: int) -> bool:  # each has run `done` times or more, and waits unless finished
            counts = [runs.get(f"/p{i}", 0) for i in range(8)]
            return min(counts) >= done and edge.waiting == sum(1 for count in counts if count < 3)

        for done in (1, 2):
            await until(functools.partial(settled, done), what=f"every poll past run {done}, waiting")
            wake.set()
            await until(lambda done=done: min(runs.values()) > done, what=f"every poll woken from run {done}")
            wake.take()
        await asyncio.wait_for(asyncio.gather(*served), 10)
        return [(sent[0]["status"], _body(sent)) for sent, _ in outputs]

    answers = run_on_own_loop(scenario(), timeout=20)
    assert answers == [(200, f"/p{i} after 3 runs".encode()) for i in range(8)]
    assert sorted(ended) == sorted(f"/p{i}" for i in range(8))


def test_a_spooled_body_is_sent_from_the_loop_while_its_thread_serves_others() -> None:
    """One thread: while a slow client takes a spooled 4 MB body, another request is answered."""
    body = bytes(range(256)) * 16384
    closed: list[bool] = []
    order: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Length", str(len(body)))])
        if environ["PATH_INFO"] == "/export":
            return Spooled(io.BytesIO(body), lambda: closed.append(True))
        return [b"quick"]

    async def scenario() -> bytes:
        edge = Edge(app, EdgeConfig(threads=1, capacity=1, write_seconds=5))
        sent: list[dict[str, Any]] = []

        async def slow(message: dict[str, Any]) -> None:
            sent.append(message)
            await asyncio.sleep(0.05)

        export = asyncio.create_task(edge.serve(scope("/export", "GET"), body_messages(b""), slow))
        await until(lambda: len(sent) >= 2, what="the export's first chunk sent")
        quick, send = _collect()
        await asyncio.wait_for(
            edge.serve(scope("/quick", "GET", client=("10.0.0.9", 1)), body_messages(b""), send), 2
        )
        order.append("quick" if not export.done() else "export")
        await asyncio.wait_for(export, 10)
        assert _body(quick) == b"quick"
        return _body(sent)

    assert run_on_own_loop(scenario(), timeout=20) == body
    assert order == ["quick"] and closed == [True]


def test_a_streamed_answer_to_a_slow_reader_holds_no_thread_while_its_backlog_is_sent() -> None:
    """One thread: an answer written faster than its client reads (an event stream replaying a long
    history) gives its thread back once MAX_UNSENT_BYTES wait, so another request is answered meanwhile,
    and the stream resumes where it left off."""
    chunk = b"data: " + b"x" * 65530 + b"\n\n"
    chunks = 64  # 4 MB, far past MAX_UNSENT_BYTES
    order: list[str] = []

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        if environ["PATH_INFO"] == "/events":
            return (chunk for _ in range(chunks))
        return [b"quick"]

    async def scenario() -> bytes:
        edge = Edge(app, EdgeConfig(threads=1, capacity=1, write_seconds=5))
        sent: list[dict[str, Any]] = []
        reading = asyncio.Event()

        async def slow(message: dict[str, Any]) -> None:
            sent.append(message)
            if len(sent) > 2:
                await reading.wait()  # the client stops reading after the first chunk or so

        stream = asyncio.create_task(edge.serve(scope("/events", "GET"), body_messages(b""), slow))
        await until(lambda: len(sent) >= 3, what="the stream's client to stall")
        quick, send = _collect()
        await asyncio.wait_for(
            edge.serve(scope("/quick", "GET", client=("10.0.0.9", 1)), body_messages(b""), send), 2
        )
        order.append("quick" if not stream.done() else "stream")
        reading.set()
        await asyncio.wait_for(stream, 10)
        assert _body(quick) == b"quick"
        return _body(sent)

    assert run_on_own_loop(scenario(), timeout=20) == chunk * chunks
    assert order == ["quick"]


def test_an_ipv6_64_is_one_address_for_the_caps_and_the_figures_say_so() -> None:
    """One host commonly holds a whole /64: its addresses share one per-address cap."""
    assert address_group("2001:db8::1") == address_group("2001:db8::ffff:1") == "2001:db8::/64"
    assert address_group("2001:db8:0:1::1") == "2001:db8:0:1::/64" and address_group("10.1.2.3") == "10.1.2.3"
    config = EdgeConfig(max_requests_per_address=1, max_requests=10, body_seconds=5)
    answers: list[tuple[str, int]] = []

    async def scenario() -> dict[str, float]:
        edge = Edge(Recorder(), config)
        release = asyncio.Event()

        def request(address: str) -> Any:
            return held_request(edge, address, release, answers)

        held = [asyncio.create_task(request(a)) for a in ("2001:db8::1", "2001:db8:0:1::1")]
        await until(lambda: edge.total == 2, what="both /64s admitted")
        await request("2001:db8::ffff:2")  # the first one's /64: refused at once
        figures = {name: value for name, _, value in edge.figures()}
        release.set()
        await asyncio.gather(*held)
        return figures

    figures = run_on_own_loop(scenario(), timeout=20)
    assert answers[0] == ("2001:db8::ffff:2", 503)
    assert sorted(answers[1:]) == [("2001:db8:0:1::1", 200), ("2001:db8::1", 200)]
    assert figures["zolve_edge_requests_in_progress"] == 2 and figures["zolve_edge_addresses"] == 2
    assert (
        figures["zolve_edge_refused_address_total"] == 1 and figures["zolve_edge_refused_process_total"] == 0
    )


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([], 400),
        ([(b"host", b"x"), (b"host", b"y")], 400),
        ([(b"host", b"x"), (b"transfer-encoding", b"gzip, chunked")], 501),
        ([(b"host", b"x"), (b"transfer-encoding", b"chunked")], 200),
    ],
)
def test_one_host_and_no_transfer_coding_but_chunked(headers: list, status: int) -> None:
    answered, _, body = serve(Recorder(), scope(headers=headers), body_messages(b""))
    assert answered == status and json.loads(body)["code"] == status if status != 200 else body == b"ok"


def test_the_question_mark_counts_toward_the_targets_length() -> None:
    query = b"q=" + b"x" * (MAX_TARGET_BYTES - len("/jobs?q=") + 1)  # /jobs?q=xx...: one byte over
    assert serve(Recorder(), scope(method="GET", query=query), body_messages(b""))[0] == 414
    assert serve(Recorder(), scope(method="GET", query=query[:-1]), body_messages(b""))[0] == 200


def test_a_client_that_expects_100_continue_is_refused_before_it_sends_its_body() -> None:
    """Reading the body would make granian send `100 Continue`, inviting 64 MiB to be thrown away."""
    asked: list[str] = []

    async def receive() -> dict[str, Any]:
        asked.append("receive")
        return {"type": "http.request", "body": b"x" * 100, "more_body": True}

    headers = [(b"host", b"x"), (b"content-length", b"67108864"), (b"expect", b"100-continue")]
    status, answer_headers, _ = serve(Recorder(), scope(headers=headers), receive)
    assert status == 413 and answer_headers[b"connection"] == b"close" and asked == []


def test_the_kernel_resets_what_a_client_does_not_take_within_the_write_deadline() -> None:
    """TCP_USER_TIMEOUT on the process's listening sockets (their connections inherit it) and on the
    request's own connection, accepted before."""
    import socket

    from zolve.edge import limit_unsent_time

    with (
        socket.create_server(("127.0.0.1", 0)) as listener,
        socket.create_connection(listener.getsockname()) as client,
    ):
        accepted, _ = listener.accept()
        with accepted:
            here, there = client.getsockname(), client.getpeername()
            request = {"client": (here[0], str(here[1])), "server": (there[0], str(there[1]))}
            assert limit_unsent_time(2.5, request) >= 2
            for sock in (listener, accepted):
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 2500
            assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 0


@pytest.mark.parametrize(("promised", "logged"), [("5", (404, 5)), ("10", (499, 5))])
def test_an_answer_whose_every_promised_byte_was_sent_is_whole_though_the_client_closed_first(
    promised: str, logged: tuple[int, int]
) -> None:
    """A client that has all the Content-Length it was told of may close before the exchange's last, empty
    message: that answer was logged 499 (seen: a 404 the client read). One short of its promise is a 499."""

    def answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response("404 NOT FOUND", [("Content-Type", "text/plain"), ("Content-Length", promised)])
        yield b"gone."
        time.sleep(0.2)  # the end comes apart from the body

    records: list[tuple[int, int | None]] = []

    class Log:
        def record(self, client: str, line: bytes, status: int, size: int | None, *rest: bytes) -> None:
            records.append((status, size))

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and not message["more_body"]:
            raise OSError("the client closed")  # granian, once the client has left

    async def scenario() -> None:
        await Edge(answer, CONFIG, Log()).serve(scope(method="GET"), body_messages(b""), send)  # type: ignore[arg-type]

    run_on_own_loop(scenario(), timeout=20)
    assert records == [logged]
