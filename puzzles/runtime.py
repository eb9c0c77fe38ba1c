"""Run control shared by every puzzle: time limits, cancellation and progress.

Celery's soft time limit cannot stop a running Z3 `check()`, so a `Run` hands out fresh Z3 contexts and
interrupts all of them from another thread when the job is cancelled or its deadline passes. Each check
also carries Z3's own `timeout`, so the solver stops by itself even if nobody interrupts it.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any, NoReturn

import z3

from core.alarms import Alarm, AlarmClock
from core.errors import StopReason


def checkpoint() -> None:
    """A point where the run this thread is inside may stop (raising `Stopped` once it is cancelled or out
    of time); nothing outside a run. Numpy or plain-Python work that Z3 does not do and that is not handed
    the run (a Planet X clue's mask over every board, say) calls it between steps, so that a cancel stops
    it there, not at the end of a game's set-up."""
    run = _CURRENT.get()
    if run is not None:
        run.raise_if_stopped()


class Stopped(Exception):
    """The run was stopped before the puzzle finished."""


class Cancelled(Stopped):
    """Somebody asked for the job to stop."""


class TimeLimitExceeded(Stopped):
    """The job used up its solve time."""


class SolverGaveUp(Exception):
    """Z3 answered `unknown` for a reason other than a stop (e.g. out of memory)."""


_TIMER_SLACK = 0.1  # seconds
#: every run's deadline, on one thread per process (a thread per run cost milliseconds: core.alarms)
_DEADLINES = AlarmClock("zolve-deadlines")

#: the run this thread is inside (Run.__enter__ to __exit__), for `checkpoint()`
_CURRENT: ContextVar[Run | None] = ContextVar("zolve_run", default=None)
#: contexts a stop has interrupted: one kept across runs may still hold the interrupt (Run.adopt)
_INTERRUPTED: weakref.WeakSet[z3.Context] = weakref.WeakSet()

ProgressCallback = Callable[[dict[str, Any]], None]
#: rows as a puzzle hands them over: keys alone, or (key, payload) pairs
RowsCallback = Callable[[list[Any]], None]


class Run:
    """One execution of a puzzle: a deadline, a cancel switch and a progress sink."""

    def __init__(
        self,
        time_limit: float | None = None,
        on_progress: ProgressCallback | None = None,
        on_rows: RowsCallback | None = None,
        resources: Mapping[str, Callable[..., Any]] | None = None,
        slice_seconds: float | None = None,
    ):
        self.time_limit = time_limit
        #: a shard that has run this long hands the rest of its work to a new shard (see
        #: puzzles.sharding.over_range), so that a shared queue turns over; None: run to the end
        self.slice_seconds = slice_seconds
        self._resources = dict(resources or {})
        self._on_rows = on_rows
        self.deadline = time.monotonic() + time_limit if time_limit else None
        self._on_progress = on_progress
        self._contexts: list[z3.Context] = []
        self._lock = threading.Lock()
        self._stop_reason: StopReason | None = None
        self._watchdog: Alarm | None = None
        self._token: Token[Run | None] | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> Run:
        if self.deadline is not None:
            delay = self.deadline - time.monotonic()
            self._watchdog = _DEADLINES.after(delay, lambda: self.stop(StopReason.TIMEOUT))
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None
        with self._lock:
            self._contexts.clear()
        if exc is not None:
            self._raise_stop_for(exc)

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """Turn Z3's "canceled" errors into the run's stop: an interrupt that lands while Z3 builds or
        simplifies (rather than inside a check) raises instead of answering unknown."""
        try:
            yield
        except z3.Z3Exception as exc:
            self._raise_stop_for(exc)
            raise

    def _raise_stop_for(self, exc: BaseException) -> None:
        if isinstance(exc, z3.Z3Exception) and self._stop_reason is not None:
            try:
                self.raise_if_stopped()
            except Stopped as stop:
                raise stop from exc

    def context(self) -> z3.Context:
        """A fresh Z3 context that `stop()` interrupts (one per job or shard: no shared-state leaks)."""
        ctx = z3.Context()
        with self._lock:
            self._contexts.append(ctx)
            stopped = self._stop_reason is not None
        if stopped:
            ctx.interrupt()
        return ctx

    @contextmanager
    def adopt(self, ctx: z3.Context) -> Iterator[z3.Context]:
        """Let `stop()` interrupt a long-lived context (kept by the process across runs) while this run
        uses it; check `raise_if_stopped()` before each check. The watchdog's interrupt is the deadline
        (no per-check `timeout` parameter).

        An interrupt that lands after a check (an earlier run stopped once its last check was over) is
        kept by Z3 until the context's next check: until then every push and assertion fails with
        "canceled", in whichever run comes next. A check of an empty scratch solver clears it, first,
        on a context that a stop has interrupted."""
        if ctx in _INTERRUPTED:
            _INTERRUPTED.discard(ctx)
            z3.Solver(ctx=ctx).check()
        with self._lock:
            self._contexts.append(ctx)
        try:
            yield ctx
        finally:
            with self._lock:  # only this adoption: the run may hold the context for itself as well
                del self._contexts[max(i for i, c in enumerate(self._contexts) if c is ctx)]

    def stop(self, reason: StopReason = StopReason.CANCELLED) -> None:
        """Stop the run from any thread: every running `check()` returns within about a second."""
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = reason
            # under the lock: once `adopt` has let go of a shared context, no late interrupt reaches it
            for ctx in self._contexts:
                ctx.interrupt()
                _INTERRUPTED.add(ctx)

    # -- inside the puzzle -----------------------------------------------------------------------
    @property
    def stop_reason(self) -> StopReason | None:
        return self._stop_reason

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def raise_if_stopped(self) -> None:
        remaining = self.remaining()
        if self._stop_reason is None and remaining is not None and remaining <= 0:
            self._stop_reason = StopReason.TIMEOUT
        if self._stop_reason == StopReason.TIMEOUT:
            raise TimeLimitExceeded(f"time limit of {self.time_limit:g} s exceeded")
        if self._stop_reason is not None:
            raise Cancelled(self._stop_reason)

    def check(self, solver: z3.Solver | z3.Optimize, *assumptions: z3.ExprRef) -> z3.CheckSatResult:
        """`solver.check()` bounded by the remaining time; raises `Stopped` instead of returning unknown."""
        self.raise_if_stopped()
        remaining = self.remaining()
        if remaining is not None:
            solver.set("timeout", max(1, int(remaining * 1000)))
        result = solver.check(*assumptions)
        if result == z3.unknown:
            self.raise_for_unknown(solver)
        return result

    def raise_for_unknown(self, solver: z3.Solver | z3.Optimize) -> NoReturn:
        """Why a check answered unknown: a stop (cancel, time limit) or Z3 giving up."""
        remaining = self.remaining()
        # Z3's own timer may fire a hair before ours
        if remaining is not None and remaining < _TIMER_SLACK and self._stop_reason is None:
            self._stop_reason = StopReason.TIMEOUT
        self.raise_if_stopped()
        raise SolverGaveUp(f"Z3 gave up: {solver.reason_unknown()}")

    def progress(self, **fields: Any) -> None:
        """Report progress (JSON-able fields); the worker stores the latest report on the job."""
        if self._on_progress is not None:
            self._on_progress(fields)

    def resource(self, name: str, **kwargs: Any) -> Any:
        """Data the host offers the puzzle (e.g. the stored boards of an enumeration), or None when the
        puzzle runs without it and has to make its own."""
        provider = self._resources.get(name)
        return provider(**kwargs) if provider is not None else None

    def rows(self, rows: list[Any]) -> None:
        """Hand bulk output (e.g. enumerated boards) to whoever runs the puzzle, if anyone wants it."""
        if self._on_rows is not None:
            self._on_rows(rows)
