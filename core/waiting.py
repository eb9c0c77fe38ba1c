"""Waiting that holds no thread: what a request that waits (an event stream between its events, a long-poll
until its job ends, an export while its client drains it) asks of the server it runs under.

The API's edge (zolve.edge) runs the WSGI app in a small pool of threads. A request that waits for
something tells the edge so and gives its thread back; the edge waits on its event loop, where a waiting
request costs a coroutine, and runs the request's code again in a thread once there is something to do:

- an event stream `yield from pause(environ, wake, timeout)` between its events: its answer's iterator is
  resumed (in whichever thread is free) once `wake` is set or `timeout` passed;
- a long-poll calls `Rerun.ask(wake, timeout)` and returns any answer: the edge drops that answer and runs
  the request again once `wake` is set or `timeout` passed, until an answer is not a rerun's;
- an export returns a `Spooled` body (the rows already read into a spool, the database let go): the edge
  sends it from its event loop.

Under any other WSGI server (Flask's test client, say) the environ carries neither key: a stream waits in
its thread, and a request that asks to run again is run again in its thread (`in_thread`), the same code
either way: the app works the same anywhere, and costs less under the edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

#: the environ keys the edge sets: streamed answers may yield Pause; a long-poll's Rerun; what the edge
#: reports for /metrics (a callable: [(name, help, value)]); where the app tells the edge the weight of the
#: request's credential, once it has verified it (a callable taking the weight: zolve.fair_queue)
PAUSABLE = "zolve.pausable"
RERUN = "zolve.rerun"
EDGE_FIGURES = "zolve.edge_figures"
CLIENT_WEIGHT = "zolve.client_weight"

T = TypeVar("T")

#: what a spooled body is read in, by whoever sends it
SPOOL_CHUNK = 256 * 1024


class Wake:
    """A wake-up set by one thread (the event feed's) and waited for by a thread or on an event loop. It
    stays set until `take`n, so that one set between two waits is not lost."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def set(self) -> None:
        with self._lock:
            self._event.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits there any more
                loop.call_soon_threadsafe(_resolve, future)

    def is_set(self) -> bool:
        return self._event.is_set()

    def take(self) -> bool:
        """Whether it was set (clearing it)."""
        with self._lock:
            was = self._event.is_set()
            self._event.clear()
            return was

    def wait(self, timeout: float) -> bool:
        """Wait in this thread until set or `timeout`; whether it was set (clearing it)."""
        self._event.wait(max(timeout, 0.0))
        return self.take()

    async def wait_async(self, timeout: float) -> None:
        """Wait on the running event loop until set or `timeout` (leaving it set, for `take`)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._event.is_set():
                return
            self._waiters.append((loop, future))
        try:
            await asyncio.wait_for(future, max(timeout, 0.0))
        except TimeoutError:
            pass
        finally:
            with self._lock, contextlib.suppress(ValueError):
                self._waiters.remove((loop, future))


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(frozen=True)
class Pause:
    """Yielded by a streamed answer to the edge: give the thread back until `wake` or `timeout` seconds."""

    wake: Wake
    timeout: float


def pause(environ: dict[str, Any], wake: Wake, timeout: float) -> Generator[Pause, None, bool]:
    """In a streamed answer's generator, `woken = yield from pause(...)`: wait for `wake` or `timeout`,
    holding no thread under the edge (elsewhere, in this thread). Whether `wake` was set."""
    if environ.get(PAUSABLE):
        yield Pause(wake, timeout)
        return wake.take()
    return wake.wait(timeout)


@dataclass
class Rerun:
    """A request the edge runs again while it asks to (a long-poll): when it arrived, what its runs keep
    for the next (a subscription, say), and what to do when it ends."""

    arrived: float = field(default_factory=time.monotonic)
    kept: dict[str, Any] = field(default_factory=dict)
    asked: Pause | None = None
    _endings: list[Callable[[], None]] = field(default_factory=list)

    def ask(self, wake: Wake, timeout: float) -> None:
        """Run this request again once `wake` is set or after `timeout`; its answer this time is dropped."""
        self.asked = Pause(wake, timeout)

    def on_end(self, callback: Callable[[], None]) -> None:
        self._endings.append(callback)

    def end(self) -> None:
        endings, self._endings = self._endings, []
        for callback in endings:
            callback()


def in_thread(step: Callable[[Rerun], T | None]) -> T:
    """What the edge does for a request that asks to run again, done in this thread (under another server
    than the edge): `step` runs until it returns something, this thread waiting for each wake-up it asks
    for; the request's endings run at the end."""
    rerun = Rerun()
    try:
        while (done := step(rerun)) is None:
            asked, rerun.asked = rerun.asked, None
            assert asked is not None, "a step that returns nothing asks to run again"
            asked.wake.wait(asked.timeout)
        return done
    finally:
        rerun.end()


def rerun_of(environ: dict[str, Any]) -> Rerun | None:
    """The request's Rerun under the edge; None elsewhere (the request then waits in its thread)."""
    rerun = environ.get(RERUN)
    return rerun if isinstance(rerun, Rerun) else None


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


class Spooled:
    """An answer's body read whole before (into memory or a temporary file: api.spools), at its start:
    the edge sends it from its event loop, another server iterates it. `close` closes the file and calls
    `on_close` (once)."""

    def __init__(self, file: Readable, on_close: Callable[[], None] | None = None) -> None:
        self.file = file
        self._on_close = on_close

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self.file.read(SPOOL_CHUNK):
            yield chunk

    def read(self) -> bytes:
        return self.file.read(SPOOL_CHUNK)

    def close(self) -> None:
        self.file.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()
