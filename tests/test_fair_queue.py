"""The front's turns (zolve.fair_queue): who gets the next place at gunicorn's door, and when a place is
given back. In-process asyncio: the front's use of it, with real gunicorn, is in test_front."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor

import pytest

from zolve.fair_queue import FairQueue, Place


def run(scenario: Callable[[], Coroutine[None, None, None]]) -> None:
    """The scenario on a loop of its own, in a thread: the suite's browser tests leave their own loop
    running in the main thread, where asyncio.run refuses to start another."""
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, scenario()).result(30)


async def _queued(queue: FairQueue, order: list[str], address: str, client: str, name: str) -> asyncio.Task:
    """A request that waits for its turn, then notes its name; returned once it waits."""

    async def request() -> None:
        await queue.enter(address, client)
        order.append(name)

    task = asyncio.create_task(request())
    await asyncio.sleep(0)
    return task


async def _served(queue: FairQueue, order: list[str], count: int) -> None:
    """Give back `count` places one after the other, letting each next request take its place."""
    for _ in range(count):
        queue.leave()
        await asyncio.sleep(0)


def test_free_places_are_taken_at_once_and_past_capacity_requests_wait() -> None:
    async def scenario() -> None:
        queue, order = FairQueue(capacity=2), []
        await queue.enter("a", "k")
        await queue.enter("a", "k")
        waiting = await _queued(queue, order, "a", "k", "third")
        assert order == [] and queue.busy == 2
        queue.leave()
        await waiting
        assert order == ["third"] and queue.busy == 2
        queue.leave()
        queue.leave()
        assert queue.busy == 0

    run(scenario)


def test_a_client_with_many_requests_waiting_takes_one_turn_per_round() -> None:
    async def scenario() -> None:
        queue, order = FairQueue(capacity=1), []
        await queue.enter("10.0.0.1", "poller")
        tasks = [await _queued(queue, order, "10.0.0.1", "poller", f"poll{i}") for i in range(4)]
        tasks += [await _queued(queue, order, "10.0.0.1", f"submitter{i}", f"submit{i}") for i in range(2)]
        await _served(queue, order, 6)
        assert order == ["poll0", "submit0", "submit1", "poll1", "poll2", "poll3"]
        await asyncio.gather(*tasks)

    run(scenario)


def test_made_up_credentials_from_one_address_share_that_addresss_turn() -> None:
    async def scenario() -> None:
        queue, order = FairQueue(capacity=1), []
        await queue.enter("attacker", "t0")
        tasks = [await _queued(queue, order, "attacker", f"t{i}", f"flood{i}") for i in range(1, 5)]
        tasks.append(await _queued(queue, order, "someone", "key", "honest"))
        await _served(queue, order, 5)
        assert order.index("honest") == 1  # one flood request, then the other address's turn
        await asyncio.gather(*tasks)

    run(scenario)


def test_a_request_cancelled_while_waiting_gives_up_its_turn_and_no_place_is_lost() -> None:
    async def scenario() -> None:
        queue, order = FairQueue(capacity=1), []
        await queue.enter("a", "k")
        gone = await _queued(queue, order, "a", "k", "gone")
        kept = await _queued(queue, order, "b", "k", "kept")
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        queue.leave()
        await kept
        assert order == ["kept"] and queue.busy == 1
        queue.leave()
        assert queue.busy == 0 and not queue.waiting

    run(scenario)


def test_a_place_is_given_back_once_and_by_itself_after_the_hold() -> None:
    async def scenario() -> None:
        queue, order = FairQueue(capacity=1), []
        await queue.enter("a", "k")
        place = Place(queue, hold_seconds=0.05)
        waiting = await _queued(queue, order, "b", "k", "next")
        await asyncio.wait_for(waiting, 5)  # the hold ran out: the place went on by itself
        assert order == ["next"]
        place.give_back()  # and giving it back again changes nothing
        assert queue.busy == 1

    run(scenario)
