"""core.waiting: a wake-up that a thread or an event loop waits for, and the fallbacks under a server that
is not the edge (a long-poll or a stream then waits in its thread, as before)."""

from __future__ import annotations

import asyncio
import io
import threading
import time

from core.waiting import PAUSABLE, Pause, Rerun, Spooled, Wake, in_thread, pause, rerun_of
from tests.loops import run_on_own_loop


def test_a_wake_set_before_the_wait_is_not_lost_and_take_clears_it() -> None:
    wake = Wake()
    wake.set()

    async def waited() -> float:
        started = time.monotonic()
        await wake.wait_async(10)
        return time.monotonic() - started

    assert run_on_own_loop(waited()) < 1
    assert wake.take() and not wake.take()


def test_a_wake_set_by_another_thread_ends_a_wait_on_the_loop() -> None:
    wake = Wake()

    async def waited() -> float:
        started = time.monotonic()
        threading.Timer(0.2, wake.set).start()
        await wake.wait_async(10)
        return time.monotonic() - started

    assert 0.15 < run_on_own_loop(waited()) < 5
    assert wake.is_set()


def test_a_wait_on_the_loop_ends_at_its_timeout() -> None:
    async def waited() -> float:
        started = time.monotonic()
        await Wake().wait_async(0.2)
        return time.monotonic() - started

    assert 0.15 < run_on_own_loop(waited()) < 2


def test_pause_yields_to_the_edge_and_waits_in_the_thread_elsewhere() -> None:
    wake = Wake()
    under_edge = pause({PAUSABLE: True}, wake, 5)
    assert next(under_edge) == Pause(wake, 5)
    wake.set()
    try:
        next(under_edge)
    except StopIteration as end:
        assert end.value is True
    started = time.monotonic()
    elsewhere = pause({}, wake, 0.2)
    try:
        next(elsewhere)
    except StopIteration as end:
        assert end.value is False and time.monotonic() - started >= 0.15
    assert rerun_of({}) is None


def test_a_spooled_body_reads_in_chunks_and_closes_once() -> None:
    closed: list[int] = []
    spooled = Spooled(io.BytesIO(b"x" * 600_000), lambda: closed.append(1))
    assert sum(len(chunk) for chunk in spooled) == 600_000
    spooled.close()
    spooled.close()
    assert closed == [1]


def test_a_wake_set_while_no_loop_runs_any_more_is_harmless() -> None:
    wake = Wake()

    async def abandoned() -> None:
        waiting = asyncio.ensure_future(wake.wait_async(30))
        await asyncio.sleep(0.05)
        waiting.cancel()

    run_on_own_loop(abandoned())
    wake.set()
    assert wake.take()


def test_in_thread_runs_a_step_again_at_each_wake_up_it_asks_for_and_ends_the_request() -> None:
    wake, runs, ended = Wake(), [], []

    def step(rerun: Rerun) -> str | None:
        runs.append(time.monotonic())
        if len(runs) == 1:
            rerun.on_end(lambda: ended.append(True))
        if len(runs) < 3:
            rerun.ask(wake, 10 if len(runs) == 1 else 0.05)
            return None
        return "done"

    threading.Timer(0.1, wake.set).start()
    assert in_thread(step) == "done" and ended == [True]
    assert 0.05 < runs[1] - runs[0] < 5, "the first run again when woken"
