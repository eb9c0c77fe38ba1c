"""A callback host is looked up at submit within SUBMIT_LOOKUP_SECONDS, and its answer kept a while: a
resolver that never answers costs a submit that long, not the resolver's own timeouts and retries, and a
host named again is not looked up again.
The resolver here is a stand-in: a real one that does not answer cannot be made on loopback."""

from __future__ import annotations

import socket
import threading
import uuid
from typing import Any

import pytest

from core.config import replace
from services import webhooks


@pytest.fixture
def public_only(settings):  # type: ignore[no-untyped-def]
    return replace(settings, webhook_allowed_networks="")


def _host() -> str:
    return f"h{uuid.uuid4().hex[:12]}.example"  # each test its own: the answers are kept per process


def test_a_lookup_that_does_not_answer_in_time_refuses_the_callback(monkeypatch, public_only) -> None:
    release, asked = threading.Event(), threading.Event()

    def silent(host: str, *args: Any, **kwargs: Any) -> Any:
        asked.set()
        release.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "temporary failure")

    monkeypatch.setattr(webhooks, "SUBMIT_LOOKUP_SECONDS", 0.2)
    monkeypatch.setattr(socket, "getaddrinfo", silent)
    host = _host()
    try:
        refused = webhooks.refused_address(public_only, f"https://{host}/hook")
        assert asked.is_set() and not release.is_set()  # answered while the lookup still waits
    finally:
        release.set()
    assert refused == f"the host {host!r} did not resolve within 0.2 s"


def test_a_host_named_again_is_not_looked_up_again(monkeypatch, public_only) -> None:
    asked: list[str] = []

    def public(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("8.8.8.8", port))]

    monkeypatch.setattr(socket, "getaddrinfo", public)
    host, missing = _host(), _host()
    assert webhooks.refused_address(public_only, f"https://{host}/a") is None
    assert webhooks.refused_address(public_only, f"https://{host}/b") is None
    assert webhooks.checked_callback_url(public_only, f"https://{host}/c") == f"https://{host}/c"

    def nowhere(host: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "not known")

    monkeypatch.setattr(socket, "getaddrinfo", nowhere)
    for _ in range(2):
        assert webhooks.refused_address(public_only, f"https://{missing}/") == (
            f"the host {missing!r} does not resolve"
        )
    assert asked == [host, missing]
