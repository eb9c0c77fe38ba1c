"""Fair turns at the app's door: each API process (zolve.edge) lets at most `capacity` requests be computed
at once and, past that, gives the next free place to the waiting client that has used the least of the
service's time, each client's own requests in the order they came.

Without it, every request went straight to the app's threads, which and the GIL serve whoever sent the
most: a client with forty connections polling in a loop took the service's time from ten clients
submitting beside it, and every request queued where nothing ordered it (a process's threads, the GIL),
which made the slowest answers several times the typical one (bench/api_load.py, docs/benchmarks.md).

Fair in time, not in number (start-time fair queuing, with the cost known only afterwards): a request is
charged the time it held its place (ESTIMATE when it takes it, corrected when it gives it back). Turns by
number let a client of slow requests (a submit holds its place for milliseconds, a poll for a fraction of
one) take most of the service's time; now a client of quick requests gets as many more turns as its
requests are quicker. A client that starts waiting again starts at the time of the client served last:
what it did not use while it was away is not banked, but what it used beyond the others is still owed,
up to MAX_DEBT, so a client with one connection pays for its slow requests too.

Two levels, as before: the addresses the requests come from share the time, and within an address the
credentials they carry (a client is its `Authorization` header), so that neither many connections nor many
made-up tokens from one address buy more than that address's share. Within an address, credentials share
its time in the ratio of their keys' weights (`weigh`: the app says a credential's weight once it has
verified it; a credential the app has not vouched for weighs 1): a key of weight 3 is charged a third of
the time it holds a place.

A request holds its place only while it is computed: its place goes on once its response's head has come
back, or after `hold_seconds` (a long-poll waiting for a job, or any request waiting on something else, is
not computing, and must not keep others out).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass

#: seconds a request is charged when it takes its place, before its own time is known: places freed at
#: once then go to different clients
ESTIMATE = 0.001
#: the most a client may have used beyond the client served last, in seconds of a place
MAX_DEBT = 1.0
#: clients (per level) remembered before some are forgotten (they start afresh, owing nothing)
REMEMBERED = 4096

#: (address, client): whose request holds a place, to charge its time to
Ticket = tuple[Hashable, Hashable]


@dataclass
class _Flow:
    used: float
    #: it has an entry in its level's heap
    queued: bool = False
    #: what its time is divided by when it is charged
    weight: float = 1.0


class _Level:
    """The flows of one level (addresses, or one address's clients); the waiting ones in a heap by the
    time they have used."""

    def __init__(self) -> None:
        self.flows: dict[Hashable, _Flow] = {}
        self.heap: list[tuple[float, int, Hashable]] = []
        #: the used time of the flow served last: where a flow that starts waiting starts
        self.clock = 0.0
        self._order = itertools.count()
        #: flows remembered before some are forgotten (more while more are waiting)
        self._remembered = REMEMBERED

    def wait(self, key: Hashable) -> None:
        """`key` has a request waiting: it enters the heap (once), owing at least the clock."""
        flow = self.flows.setdefault(key, _Flow(self.clock))
        if not flow.queued:
            flow.used, flow.queued = max(flow.used, self.clock), True
            heapq.heappush(self.heap, (flow.used, next(self._order), key))

    def next(self, waits: Callable[[Hashable], bool]) -> Hashable:
        """The waiting flow that has used the least (the first to wait among equals); it leaves the heap.
        Flows whose requests have all gone (`waits` false) are passed over."""
        while True:
            used, _, key = heapq.heappop(self.heap)
            flow = self.flows[key]
            if not waits(key):
                flow.queued = False
            elif used != flow.used:  # charged since it entered: back in at what it owes now
                heapq.heappush(self.heap, (flow.used, next(self._order), key))
            else:
                flow.queued = False
                self.clock = max(self.clock, used)
                return key

    def charge(self, key: Hashable, seconds: float) -> bool:
        """Add `seconds` to what `key` has used; True when flows were forgotten: past `_remembered`, all
        but the waiting ones and the REMEMBERED // 2 that owe the most (a flood of new clients while no
        one waits, when the clock stands still, must not grow this without end)."""
        flow = self.flows.setdefault(key, _Flow(self.clock))
        flow.used = min(flow.used + seconds / flow.weight, self.clock + MAX_DEBT)
        if len(self.flows) <= self._remembered:
            return False
        owing = [(f.used, k) for k, f in self.flows.items() if not f.queued and f.used > self.clock]
        kept = {k for _, k in heapq.nlargest(REMEMBERED // 2, owing, key=lambda pair: pair[0])}
        self.flows = {k: f for k, f in self.flows.items() if f.queued or k in kept}
        self._remembered = max(REMEMBERED, 2 * len(self.flows))
        return True

    def weigh(self, key: Hashable, weight: float) -> None:
        self.flows.setdefault(key, _Flow(self.clock)).weight = weight


class FairQueue:
    """Who gets the next place: the address that has used the least time, then within it the client that
    has used the least."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        #: requests holding a place now
        self.busy = 0
        #: per address, per client its waiting requests in order
        self.waiting: dict[Hashable, dict[Hashable, deque[asyncio.Future[None]]]] = {}
        self.addresses = _Level()
        #: per address, its clients' level
        self.clients: dict[Hashable, _Level] = {}

    async def enter(self, address: Hashable, client: Hashable) -> Ticket:
        """Return once the request may go to the app (at once when a place is free and no one waits);
        the ticket goes back with its place (`leave`)."""
        ticket = (address, client)
        if self.busy < self.capacity and not self.waiting:
            self.busy += 1
            self._charge(ticket, ESTIMATE)
            return ticket
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        requests = self.waiting.setdefault(address, {}).setdefault(client, deque())
        requests.append(turn)
        self._level(address).wait(client)
        self.addresses.wait(address)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.leave(ticket, 0.0)  # the place came with the cancellation: pass it on
            else:
                self._forget(address, client, turn)
            raise
        return ticket

    def leave(self, ticket: Ticket, held_seconds: float) -> None:
        """A request gives its place back after holding it `held_seconds`: the next in turn takes it."""
        self._charge(ticket, held_seconds - ESTIMATE)
        while self.waiting:
            turn, taker = self._next_turn()
            if not turn.done():
                self._charge(taker, ESTIMATE)
                turn.set_result(None)
                return
        self.busy -= 1

    def weigh(self, ticket: Ticket, weight: float) -> None:
        """The ticket's client weighs `weight` within its address from now on (the app vouched for it)."""
        address, client = ticket
        self._level(address).weigh(client, weight)

    def weight_of(self, ticket: Ticket) -> float:
        """The ticket's client's weight as the turns know it (1 for a client they do not know)."""
        address, client = ticket
        level = self.clients.get(address)
        flow = level.flows.get(client) if level is not None else None
        return flow.weight if flow is not None else 1.0

    def _level(self, address: Hashable) -> _Level:
        level = self.clients.get(address)
        if level is None:
            level = self.clients[address] = _Level()
        return level

    def _charge(self, ticket: Ticket, seconds: float) -> None:
        address, client = ticket
        if self.addresses.charge(address, seconds):  # addresses forgotten: their clients go with them
            self.clients = {a: level for a, level in self.clients.items() if a in self.addresses.flows}
        self._level(address).charge(client, seconds)

    def _next_turn(self) -> tuple[asyncio.Future[None], Ticket]:
        """The first request of the next client of the next address."""
        address = self.addresses.next(lambda a: a in self.waiting)
        clients = self.waiting[address]
        level = self._level(address)
        client = level.next(lambda c: c in clients)
        requests = clients[client]
        turn = requests.popleft()
        if requests:
            level.wait(client)
        else:
            del clients[client]
        if clients:
            self.addresses.wait(address)
        else:
            del self.waiting[address]
        return turn, (address, client)

    def _forget(self, address: Hashable, client: Hashable, turn: asyncio.Future[None]) -> None:
        """A request that stopped waiting (its entries in the heaps are passed over when reached)."""
        clients = self.waiting.get(address, {})
        requests = clients.get(client)
        if requests is None or turn not in requests:
            return  # already taken out of the round
        requests.remove(turn)
        if not requests:
            del clients[client]
        if not clients:
            del self.waiting[address]


class Place:
    """One request's place: given back once, whichever comes first (its response's head, `hold_seconds`,
    or the request's end), charged the time it was held."""

    def __init__(self, queue: FairQueue, ticket: Ticket, hold_seconds: float) -> None:
        self.queue, self.ticket = queue, ticket
        self.held = True
        self.loop = asyncio.get_running_loop()
        self.taken = self.loop.time()
        self.timer = self.loop.call_later(hold_seconds, self.give_back)

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.timer.cancel()
            self.queue.leave(self.ticket, self.loop.time() - self.taken)
