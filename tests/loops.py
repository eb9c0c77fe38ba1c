"""Coroutines for tests that are not themselves async."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_on_own_loop(scenario: Coroutine[Any, Any, T], timeout: float = 30) -> T:
    """The coroutine on a loop of its own, in a thread: the suite's browser tests leave their own loop
    running in the main thread, where asyncio.run refuses to start another."""
    thread = ThreadPoolExecutor(1)
    try:
        return thread.submit(asyncio.run, scenario).result(timeout)
    finally:
        thread.shutdown(wait=False, cancel_futures=True)  # a scenario stuck past its time fails the test


async def until(condition: Callable[[], object], timeout: float = 10, what: str = "") -> None:
    """Poll `condition` on the running loop (its tasks running meanwhile) until it holds, or fail."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out after {timeout} s waiting for {what or condition}"
        await asyncio.sleep(0.01)
