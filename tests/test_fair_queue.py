"""The API's turns (zolve.fair_queue): who gets the next place at the app's door, and when a place is
given back. In-process asyncio: zolve.edge's use of it is in test_edge."""

from __future__ import annotations

import asyncio
from collections import Counter, deque

import pytest

from tests.loops import run_on_own_loop
from zolve.fair_queue import MAX_DEBT, REMEMBERED, FairQueue, Place, Ticket

COST = 0.01


async def _queued(
    queue: FairQueue, order: list[str], holders: deque[Ticket], address: str, client: str, name: str
) -> asyncio.Task:
    """A request that waits for its turn, then notes its name and holds its place; returned once it
    waits."""

    async def request() -> None:
        holders.append(await queue.enter(address, client))
        order.append(name)

    task = asyncio.create_task(request())
    await asyncio.sleep(0)
    return task


async def _served(queue: FairQueue, holders: deque[Ticket], count: int, cost: float = COST) -> None:
    """Give back `count` places one after the other, each held `cost` seconds, letting each next request
    take its place."""
    for _ in range(count):
        queue.leave(holders.popleft(), cost)
        await asyncio.sleep(0)


def test_free_places_are_taken_at_once_and_past_capacity_requests_wait() -> None:
    async def scenario() -> None:
        queue, order, holders = FairQueue(capacity=2), [], deque()
        holders.append(await queue.enter("a", "k"))
        holders.append(await queue.enter("a", "k"))
        waiting = await _queued(queue, order, holders, "a", "k", "third")
        assert order == [] and queue.busy == 2
        await _served(queue, holders, 1)
        await waiting
        assert order == ["third"] and queue.busy == 2
        await _served(queue, holders, 2)
        assert queue.busy == 0

    run_on_own_loop(scenario())


def test_a_client_with_many_requests_waiting_gets_no_more_than_its_share() -> None:
    """The poller has had its place: the two submitters, who have had none, go first; each client's own
    requests keep their order."""

    async def scenario() -> None:
        queue, order, holders = FairQueue(capacity=1), [], deque()
        holders.append(await queue.enter("10.0.0.1", "poller"))
        tasks = [await _queued(queue, order, holders, "10.0.0.1", "poller", f"poll{i}") for i in range(4)]
        tasks += [
            await _queued(queue, order, holders, "10.0.0.1", f"submitter{i}", f"submit{i}") for i in range(2)
        ]
        await _served(queue, holders, 6)
        assert order == ["submit0", "submit1", "poll0", "poll1", "poll2", "poll3"]
        await asyncio.gather(*tasks)

    run_on_own_loop(scenario())


def test_made_up_credentials_from_one_address_share_that_addresss_turn() -> None:
    async def scenario() -> None:
        queue, order, holders = FairQueue(capacity=1), [], deque()
        holders.append(await queue.enter("attacker", "t0"))
        tasks = [await _queued(queue, order, holders, "attacker", f"t{i}", f"flood{i}") for i in range(1, 5)]
        tasks.append(await _queued(queue, order, holders, "someone", "key", "honest"))
        await _served(queue, holders, 5)
        assert order[0] == "honest"  # the attacker's address has had its place, whatever token comes next
        await asyncio.gather(*tasks)

    run_on_own_loop(scenario())


def test_clients_share_the_time_not_the_turns() -> None:
    """Two clients always waiting, one of requests ten times slower than the other's: the quick one is
    served about ten times as often (by turns they would be served alike)."""

    async def scenario() -> None:
        queue, holders = FairQueue(capacity=1), deque()
        cost = {"quick": 0.005, "slow": 0.05}
        served: Counter[str] = Counter()

        async def client(name: str) -> None:
            while True:
                holders.append(await queue.enter(name, "key"))
                served[name] += 1

        holders.append(await queue.enter("someone", "key"))
        clients = [asyncio.create_task(client(name)) for name in cost]
        await asyncio.sleep(0)
        for _ in range(330):
            ticket = holders.popleft()
            queue.leave(ticket, cost.get(ticket[0], COST))
            await asyncio.sleep(0)
        for task in clients:
            task.cancel()
        await asyncio.gather(*clients, return_exceptions=True)
        assert 9 <= served["quick"] / served["slow"] <= 11, served

    run_on_own_loop(scenario())


def test_credentials_of_one_address_share_its_time_by_their_weights() -> None:
    """Two keys behind one address (a proxy), always waiting, of equal requests: the key the app said
    weighs 3 is served three times as often as the one of weight 1, and a weight set back to 1 is
    equal again."""

    async def scenario() -> None:
        queue, holders = FairQueue(capacity=1), deque()
        served: Counter[str] = Counter()

        async def client(name: str) -> None:
            while True:
                holders.append(await queue.enter("proxy", name))
                served[name] += 1

        async def serve(turns: int) -> None:
            for _ in range(turns):
                queue.leave(holders.popleft(), COST)
                await asyncio.sleep(0)

        holders.append(await queue.enter("proxy", "light"))
        queue.weigh(("proxy", "heavy"), 3.0)
        assert queue.weight_of(("proxy", "heavy")) == 3.0 and queue.weight_of(("proxy", "light")) == 1.0
        clients = [asyncio.create_task(client(name)) for name in ("light", "heavy")]
        await asyncio.sleep(0)
        await serve(400)
        assert 2.7 <= served["heavy"] / served["light"] <= 3.3, served
        queue.weigh(("proxy", "heavy"), 1.0)
        served.clear()
        await serve(400)
        assert 0.9 <= served["heavy"] / served["light"] <= 1.1, served
        for task in clients:
            task.cancel()
        await asyncio.gather(*clients, return_exceptions=True)

    run_on_own_loop(scenario())


def test_time_used_while_no_one_waited_is_owed_only_up_to_the_cap() -> None:
    """A client that held places for a long time while the service was idle waits behind the others for
    at most MAX_DEBT of their time once they compete."""

    async def scenario() -> None:
        queue, order, holders = FairQueue(capacity=1), [], deque()
        queue.leave(await queue.enter("heavy", "key"), 100.0)
        holders.append(await queue.enter("light", "key"))
        tasks = [await _queued(queue, order, holders, "light", "key", f"light{i}") for i in range(30)]
        tasks.append(await _queued(queue, order, holders, "heavy", "key", "heavy"))
        await _served(queue, holders, 31, cost=0.1)
        assert 5 <= order.index("heavy") <= MAX_DEBT / 0.1 + 1, order
        await asyncio.gather(*tasks)

    run_on_own_loop(scenario())


def test_a_flood_of_clients_is_not_remembered_without_end() -> None:
    async def scenario() -> None:
        queue = FairQueue(capacity=4)
        for i in range(3 * REMEMBERED):
            queue.leave(await queue.enter(f"10.0.{i // 256}.{i % 256}", f"token{i}"), COST)
        assert len(queue.addresses.flows) <= REMEMBERED and len(queue.clients) <= REMEMBERED
        assert queue.busy == 0 and not queue.waiting

    run_on_own_loop(scenario())


def test_a_request_cancelled_while_waiting_gives_up_its_turn_and_no_place_is_lost() -> None:
    async def scenario() -> None:
        queue, order, holders = FairQueue(capacity=1), [], deque()
        holders.append(await queue.enter("a", "k"))
        gone = await _queued(queue, order, holders, "a", "k", "gone")
        kept = await _queued(queue, order, holders, "b", "k", "kept")
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        await _served(queue, holders, 1)
        await kept
        assert order == ["kept"] and queue.busy == 1
        await _served(queue, holders, 1)
        assert queue.busy == 0 and not queue.waiting

    run_on_own_loop(scenario())


def test_a_place_is_given_back_once_and_by_itself_after_the_hold() -> None:
    async def scenario() -> None:
        queue, order, holders = FairQueue(capacity=1), [], deque()
        place = Place(queue, await queue.enter("a", "k"), hold_seconds=0.05)
        waiting = await _queued(queue, order, holders, "b", "k", "next")
        await asyncio.wait_for(waiting, 5)  # the hold ran out: the place went on by itself
        assert order == ["next"]
        place.give_back()  # and giving it back again changes nothing
        assert queue.busy == 1
        assert 0.04 <= queue.addresses.flows["a"].used <= 1.0  # charged the time it held the place

    run_on_own_loop(scenario())
