"""Every client's request budget (api/request_budget.py): reserved from the real Redis in batches, never
past the budget however many processes and threads draw on it, and counted in memory when Redis is away."""

from __future__ import annotations

import threading
import uuid

from api.limits import storage_uri
from api.request_budget import RequestBudget
from tests.support import free_port

NOW = 60.0 * 28_333_333 + 10  # 10 s into a minute


def _budget(settings, limit: str) -> RequestBudget:
    return RequestBudget(limit, storage_uri(settings.redis_url), prefix=f"test-{uuid.uuid4().hex}")


def test_a_process_asks_redis_once_per_batch_not_once_per_request(settings) -> None:
    budget, client = _budget(settings, "5000 per minute"), uuid.uuid4().hex
    assert budget.batch == 100
    assert all(budget.allow(client, NOW) for _ in range(250))
    assert budget.reserved(client, NOW) == 300, "three batches of 100 for 250 requests"


def test_processes_together_never_let_a_client_past_its_budget(settings) -> None:
    client = uuid.uuid4().hex
    prefix = f"test-{uuid.uuid4().hex}"
    processes = [RequestBudget("600 per minute", storage_uri(settings.redis_url), prefix) for _ in range(3)]
    assert processes[0].batch == 12
    allowed: list[int] = []

    def hammer(budget: RequestBudget) -> None:
        allowed.append(sum(budget.allow(client, NOW) for _ in range(400)))

    threads = [threading.Thread(target=hammer, args=(p,)) for p in processes for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # each thread's reservation may strand part of a batch in its process, never more
    assert 600 - len(threads) * (12 - 1) <= sum(allowed) <= 600
    assert not any(p.allow(client, NOW) for p in processes), "spent for this window"
    assert all(p.allow(client, NOW + 60) for p in processes), "the next window has its own budget"


def test_a_small_budget_is_reserved_one_request_at_a_time_and_is_exact(settings) -> None:
    client, prefix = uuid.uuid4().hex, f"test-{uuid.uuid4().hex}"
    first, second = (RequestBudget("5 per minute", storage_uri(settings.redis_url), prefix) for _ in range(2))
    assert [first.allow(client, NOW) for _ in range(3)] == [True] * 3
    assert [second.allow(client, NOW) for _ in range(3)] == [True, True, False]
    assert first.reserved(client, NOW) == second.reserved(client, NOW) == 6, "in Redis, not per process"
    assert first.seconds_left(NOW) == 50


def test_without_redis_each_process_counts_in_its_memory() -> None:
    budget = RequestBudget("100 per minute", f"redis://127.0.0.1:{free_port()}/0")
    client = uuid.uuid4().hex
    assert sum(budget.allow(client, NOW) for _ in range(150)) == 100
    assert budget.allow(uuid.uuid4().hex, NOW), "another client has its own budget"


def test_a_client_past_its_budget_is_refused_without_asking_redis_again(settings) -> None:
    budget, client = _budget(settings, "5 per minute"), uuid.uuid4().hex
    assert [budget.allow(client, NOW) for _ in range(15)] == [True] * 5 + [False] * 10
    assert budget.reserved(client, NOW) == 6, "one refused reservation, then none"
    assert budget.allow(client, NOW + 60), "the next window asks again"
