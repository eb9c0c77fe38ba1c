"""The delivery log keeps the receiver's status and a reason of the service's own, never what the receiver
sent: the probe read up to 200 characters of a receiver's body (and exceptions' text) back through
`GET /jobs/{id}/deliveries` and the dashboard, a way to read internal services and scan ports when the
operator allows private networks (issue 37, item 5). Real worker, PostgreSQL and Redis; receivers on
loopback (TEST_ENV allows 127.0.0.0/8, tries 3 times)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

from tests.security.helpers import signed_in
from tests.support import QuietHandler, serving, wait_until

SECRET = "internal-secret-7f3a91"


@contextmanager
def leaky_receiver() -> Iterator[str]:
    """A receiver that answers 500 with the secret in its reason phrase, a header and its body."""

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook
            self.rfile.read(int(self.headers["Content-Length"]))
            body = f"<html>{SECRET} db password: {SECRET}</html>".encode()
            self.answer(500, body, {"X-Internal": SECRET}, reason=f"Oops {SECRET}")

    with serving(Handler) as url:
        yield f"{url}/hook"


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, never listened: connections to it are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _submit(client, headers: dict[str, str], callback_url: str) -> str:
    body = {"kind": "dice", "params": {"dice": 3, "faces": 3}, "fresh": True, "callback_url": callback_url}
    answer = client.post("/jobs", json=body, headers=headers)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["id"]


def _settled(client, headers: dict[str, str], job_id: str):  # type: ignore[no-untyped-def]
    def check() -> list[dict] | None:
        found = client.get(f"/jobs/{job_id}/deliveries", headers=headers).get_json()["items"]
        return found if found and all(d["state"] != "pending" for d in found) else None

    return check


def test_the_delivery_log_shows_our_reason_never_the_receivers_bytes(app, client, make_key, worker) -> None:
    owner, admin = make_key(), make_key(admin=True)
    with leaky_receiver() as url:
        leaky = _submit(client, owner, url)
        refused = _submit(client, owner, f"http://127.0.0.1:{_closed_port()}/hook")
        (delivery,) = wait_until(_settled(client, owner, leaky), 60, 0.1, "the leaky receiver's delivery")
        (unreachable,) = wait_until(_settled(client, owner, refused), 60, 0.1, "the refused delivery")
    for job_id in (leaky, refused):
        api = client.get(f"/jobs/{job_id}/deliveries", headers=owner).get_data(as_text=True)
        assert SECRET not in api, api
        assert "Errno" not in api and "Connection" not in api and "Oops" not in api
        for who in (owner, admin):
            page = signed_in(app, who).get(f"/admin/jobs/{job_id}")
            html = page.get_data(as_text=True)
            assert page.status_code == 200 and 'id="deliveries"' in html
            assert SECRET not in html, "the receiver's bytes on the page"
            assert "Errno" not in html and "Oops" not in html and "db password" not in html
    attempts = [(a["status_code"], a["reason"]) for a in delivery["attempts"]]
    assert delivery["state"] == "failed" and attempts == [(500, "HTTP 500")] * 3
    reasons = [(a["status_code"], a["reason"]) for a in unreachable["attempts"]]
    assert reasons == [(None, "connection refused")] * 3
