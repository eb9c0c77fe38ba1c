"""Fair turns at gunicorn's door: the front lets at most `capacity` requests be computed at once and, past
that, serves the waiting clients in turn (round robin), each client's own requests in the order they came.

Without it, every request went straight to gunicorn, whose threads and the GIL serve whoever sent the
most: a client with forty connections polling in a loop took the service's time from ten clients
submitting beside it, and every request queued where nothing ordered it (a process's threads, the GIL),
which made the slowest answers several times the typical one. A client's share of a busy service is now
one turn per round, however many connections it opens (bench/api_load.py, docs/benchmarks.md).

A request holds its place only while it is computed: its place goes on once its response's head has come
back, or after `hold_seconds` (a long-poll waiting for a job, or any request waiting on something else, is
not computing, and must not keep others out).
"""

from __future__ import annotations

import asyncio
from collections import deque


class FairQueue:
    """Turns go round the addresses the requests come from, and within an address round the credentials
    they carry (a client is its `Authorization` header), so that neither many connections nor many made-up
    tokens from one address buy more than that address's turn."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        #: requests holding a place now
        self.busy = 0
        #: per address in its turn's order (dicts keep their insertion order), per client its requests
        self.waiting: dict[object, dict[object, deque[asyncio.Future[None]]]] = {}

    async def enter(self, address: object, client: object) -> None:
        """Return once the request may go to gunicorn (at once when a place is free and no one waits)."""
        if self.busy < self.capacity and not self.waiting:
            self.busy += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(address, {}).setdefault(client, deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.leave()  # the place came with the cancellation: pass it on
            else:
                self._forget(address, client, turn)
            raise

    def leave(self) -> None:
        """A request gives its place back: the next request in turn takes it."""
        while self.waiting:
            turn = self._next_turn()
            if not turn.done():
                turn.set_result(None)
                return
        self.busy -= 1

    def _next_turn(self) -> asyncio.Future[None]:
        """The first request of the next client of the next address; each goes to the back of its round."""
        address = next(iter(self.waiting))
        clients = self.waiting.pop(address)
        client = next(iter(clients))
        requests = clients.pop(client)
        turn = requests.popleft()
        if requests:
            clients[client] = requests
        if clients:
            self.waiting[address] = clients
        return turn

    def _forget(self, address: object, client: object, turn: asyncio.Future[None]) -> None:
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
    or the request's end)."""

    def __init__(self, queue: FairQueue, hold_seconds: float) -> None:
        self.queue = queue
        self.held = True
        self.timer = asyncio.get_running_loop().call_later(hold_seconds, self.give_back)

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.timer.cancel()
            self.queue.leave()
