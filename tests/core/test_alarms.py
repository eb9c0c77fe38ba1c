"""core.alarms: actions run at their times on one long-lived thread per clock (and per process)."""

from __future__ import annotations

import multiprocessing
import threading
import time

from core.alarms import AlarmClock
from tests.support import wait_until


def test_alarms_ring_in_order_of_their_time_on_one_thread() -> None:
    clock = AlarmClock("test-order")
    rang: list[tuple[str, str]] = []
    clock.after(0.3, lambda: rang.append(("late", threading.current_thread().name)))
    clock.after(0.05, lambda: rang.append(("early", threading.current_thread().name)))  # armed while asleep
    wait_until(lambda: len(rang) == 2, 5, 0.01, "both alarms")
    assert rang == [("early", "test-order"), ("late", "test-order")]


def test_a_cancelled_alarm_never_rings_and_a_repeating_one_stops() -> None:
    clock = AlarmClock("test-cancel")
    rang: list[str] = []
    clock.after(0.05, lambda: rang.append("once")).cancel()
    ticks = clock.every(0.02, lambda: rang.append("tick"))
    wait_until(lambda: rang.count("tick") >= 3, 5, 0.01, "three ticks")
    ticks.cancel()
    after_cancel = len(rang)
    time.sleep(0.2)
    assert "once" not in rang and len(rang) == after_cancel


def test_an_action_that_raises_does_not_stop_the_clock() -> None:
    clock = AlarmClock("test-raise")
    rang: list[str] = []

    def fail() -> None:
        raise RuntimeError("boom")

    clock.after(0.01, fail)
    clock.after(0.05, lambda: rang.append("next"))
    wait_until(lambda: rang == ["next"], 5, 0.01, "the next alarm")


def test_arming_an_alarm_starts_no_thread_once_the_clock_runs() -> None:
    clock = AlarmClock("test-threads")
    clock.after(0.01, lambda: None)

    def clock_threads() -> int:  # this clock's own: the process's other threads come and go meanwhile
        return sum(thread.name == "test-threads" for thread in threading.enumerate())

    assert clock_threads() == 1
    alarms = [clock.after(60, lambda: None) for _ in range(200)]
    assert clock_threads() == 1
    for alarm in alarms:
        alarm.cancel()


_FORKED_CLOCK = AlarmClock("test-fork")


def test_a_forked_child_runs_a_clock_of_its_own() -> None:
    """A Celery prefork child is forked from a process whose clock may have run: the thread is not copied."""
    rang = threading.Event()
    _FORKED_CLOCK.after(0.01, rang.set)
    assert rang.wait(5)
    context = multiprocessing.get_context("fork")
    result = context.SimpleQueue()
    child = context.Process(target=_ring_on, args=(_FORKED_CLOCK, result))
    child.start()
    try:
        assert wait_until(lambda: not result.empty(), 5, 0.01, "the child's alarm")
        assert result.get() == "rang"
    finally:
        child.join(5)


def test_a_child_forked_while_the_parents_clock_held_its_lock_still_rings() -> None:
    clock = AlarmClock("test-fork-locked")
    clock.after(60, lambda: None)  # the parent's thread runs
    context = multiprocessing.get_context("fork")
    result = context.SimpleQueue()
    with clock._lock:  # as if the parent's clock thread were arming an alarm at the fork
        child = context.Process(target=_ring_on, args=(clock, result))
        child.start()
    try:
        assert wait_until(lambda: not result.empty(), 5, 0.01, "the child's alarm")
    finally:
        child.join(5)


def _ring_on(clock: AlarmClock, result: multiprocessing.queues.SimpleQueue) -> None:
    clock.after(0.01, lambda: result.put("rang"))
    time.sleep(2)
