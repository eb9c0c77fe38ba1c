"""How long a cancel takes: from the service recording the request (`cancel_requested`) to the job's
`cancelled`, both the service's own timestamps, on a private `zolve up --workers 2`; first on the idle
service (the baseline), then while another client keeps it loaded.

    .venv/bin/python bench/cancel_latency.py [--repeat 5] [--after 2]

Two kinds of running job are cancelled, each `--repeat` times, `--after` seconds after it started: an
expert Planet X enumeration (sharded: its shards stop, the queued ones never start) and a long Z3 search
(`dice`, 10 dice of 20 faces, which searches until its time limit). The load: another client's expert
enumeration, started again whenever it ends, and 8 threads polling its job without pause.

Reported: p50 and max of the cancel time per kind, idle and loaded, and the ratio loaded / idle; and the
time the client saw (POST cancel sent → its long-poll holding `cancelled`).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

from sqlalchemy import select
from zolve_client import Client, Conflict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import UpStack  # noqa: E402
from store.models import JobEvent  # noqa: E402

#: (kind, params, submit options) of each job cancelled
TARGETS: dict[str, tuple[str, dict, dict]] = {
    "expert enumeration": ("planetx.enumerate", {"mode": "expert"}, {"fresh": True}),
    "long Z3 search": ("dice", {"dice": 10, "faces": 20}, {"time_limit": 120, "fresh": True}),
}
FINAL = ("succeeded", "failed", "cancelled")


def client(stack: UpStack, name: str) -> Client:
    """The project's client for a key of its own: 429s (the key's rate limit) are waited out as their
    Retry-After says, however many come."""
    return Client(stack.url, stack.new_key(name), retries=1000)


def until_final(api: Client, job_id: str) -> dict:
    while (job := api.get(job_id, wait=10))["state"] not in FINAL:
        pass
    return job


class Load:
    """Another client: an expert enumeration again and again, and pollers on it."""

    def __init__(self, api: Client, pollers: int = 8) -> None:
        self.api, self.stop, self.current = api, threading.Event(), ""
        self.threads = [threading.Thread(target=self._enumerate, daemon=True)]
        self.threads += [threading.Thread(target=self._poll, daemon=True) for _ in range(pollers)]

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        while not self.current:
            time.sleep(0.1)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.current:
            with contextlib.suppress(Conflict):  # it ended meanwhile
                self.api.cancel(self.current)
        for thread in self.threads:
            thread.join(60)

    def _enumerate(self) -> None:
        while not self.stop.is_set():
            self.current = self.api.submit("planetx.enumerate", {"mode": "expert"}, fresh=True)["id"]
            while not self.stop.is_set() and self.api.get(self.current, wait=5)["state"] not in FINAL:
                pass

    def _poll(self) -> None:
        while not self.stop.is_set():
            if self.current:
                self.api.get(self.current)


def cancel_once(
    stack: UpStack, api: Client, target: tuple[str, dict, dict], after: float
) -> tuple[float, float]:
    """(the service's cancel_requested → cancelled, the client's POST → final state seen) in seconds."""
    kind, params, options = target
    job_id = api.submit(kind, params, **options)["id"]
    while api.get(job_id)["state"] != "running":
        time.sleep(0.05)
    time.sleep(after)
    sent = time.monotonic()
    api.cancel(job_id)
    final = until_final(api, job_id)
    seen = time.monotonic() - sent
    assert final["state"] == "cancelled", final
    with stack.db.session() as session:
        at = dict(
            session.execute(
                select(JobEvent.event, JobEvent.at).where(
                    JobEvent.job_id == uuid.UUID(job_id),
                    JobEvent.event.in_(("cancel_requested", "cancelled")),
                )
            ).all()
        )
    return (at["cancelled"] - at["cancel_requested"]).total_seconds(), seen


def measure(stack: UpStack, api: Client, args: argparse.Namespace) -> dict[str, list[tuple[float, float]]]:
    return {
        name: [cancel_once(stack, api, target, args.after) for _ in range(args.repeat)]
        for name, target in TARGETS.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--after", type=float, default=2.0, help="seconds of running before the cancel")
    args = parser.parse_args()
    with UpStack(workers=2) as stack:
        api = client(stack, "cancelling client")
        idle = measure(stack, api, args)
        with Load(client(stack, "loading client")):
            loaded = measure(stack, api, args)
    print(f"\n## cancel time (`zolve up --workers 2`, {args.repeat} cancels each, {args.after:g} s in)\n")
    print("| job | idle p50 / max | loaded p50 / max | loaded ÷ idle (p50) | client saw, loaded p50 / max |")
    print("|---|---|---|---|---|")
    for name in TARGETS:
        quiet = [service for service, _ in idle[name]]
        busy = [service for service, _ in loaded[name]]
        seen = [client_saw for _, client_saw in loaded[name]]
        print(
            f"| {name} | {statistics.median(quiet):.2f} / {max(quiet):.2f} s"
            f" | {statistics.median(busy):.2f} / {max(busy):.2f} s"
            f" | {statistics.median(busy) / statistics.median(quiet):.2f}×"
            f" | {statistics.median(seen):.2f} / {max(seen):.2f} s |"
        )


if __name__ == "__main__":
    main()
