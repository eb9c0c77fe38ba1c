"""Signed webhooks (services/webhooks.py, the workers' delivery task) with the real worker, PostgreSQL and
Redis, and receivers the tests start on loopback (TEST_ENV allows 127.0.0.0/8, retries after 0.2 s, waits
1 s for an answer and gives up after 3 attempts)."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from zolve_client import verify_signature as verify

from core.config import replace
from services import webhooks
from store.models import WebhookDelivery
from tests.api.test_admin import log_in
from tests.support import Receiver, wait_until, webhook_receiver

DICE = {"dice": 3, "faces": 3}


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as state:
        yield state


def _submit(client, headers: dict[str, str], callback_url: str, params: dict = DICE) -> str:
    body = {"kind": "dice", "params": params, "fresh": True, "callback_url": callback_url}
    answer = client.post("/jobs", json=body, headers=headers)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["id"]


def _deliveries(client, headers: dict[str, str], job_id: str) -> list[dict]:
    return client.get(f"/jobs/{job_id}/deliveries", headers=headers).get_json()["items"]


def _settled(client, headers: dict[str, str], job_id: str) -> Callable[[], list[dict] | None]:
    def check() -> list[dict] | None:
        found = _deliveries(client, headers, job_id)
        return found if found and all(d["state"] != "pending" for d in found) else None

    return check


def test_each_final_job_is_delivered_once_signed_with_the_keys_secret(
    client, auth, worker, wait_job, receiver: Receiver
) -> None:
    secret = client.get("/webhooks/secret", headers=auth).get_json()["secret"]
    assert (
        secret.startswith("whsec_")
        and client.get("/webhooks/secret", headers=auth).get_json()["secret"] == secret
    )
    jobs = [
        _submit(client, auth, f"{receiver.url}/ok/{name}", {"dice": 3, "faces": faces})
        for name, faces in (("a", 3), ("b", 4))
    ]
    for job_id in jobs:
        final = wait_job(auth, job_id)
        (delivery,) = wait_until(_settled(client, auth, job_id), 30, 0.1, "the delivery")
        assert delivery["state"] == "delivered" and [a["status_code"] for a in delivery["attempts"]] == [200]
        assert delivery["attempts"][0]["latency_ms"] > 0 and delivery["url"].endswith(
            f"/ok/{'ab'[jobs.index(job_id)]}"
        )
        (got,) = [r for r in receiver.received if r.path == f"/ok/{'ab'[jobs.index(job_id)]}"]
        assert verify(secret, got.headers, got.body)
        assert got.headers["webhook-id"] == delivery["webhook_id"]
        body = json.loads(got.body)
        assert body["id"] == job_id and body["state"] == final["state"] == "succeeded"
        assert body["result"] == final["result"]
    # a rotated secret signs from then on; the old one no longer verifies what follows
    rotated = client.post("/webhooks/secret/rotate", headers=auth).get_json()["secret"]
    assert rotated != secret
    job_id = _submit(client, auth, f"{receiver.url}/ok/c")
    wait_until(_settled(client, auth, job_id), 30, 0.1, "the delivery")
    (got,) = [r for r in receiver.received if r.path == "/ok/c"]
    assert verify(rotated, got.headers, got.body) and not verify(secret, got.headers, got.body)


def test_a_receiver_that_fails_twice_gets_the_third_attempt(
    app, client, auth, make_key, worker, receiver: Receiver
) -> None:
    job_id = _submit(client, auth, f"{receiver.url}/flaky/one")
    (delivery,) = wait_until(_settled(client, auth, job_id), 30, 0.1, "the delivery")
    assert delivery["state"] == "delivered"
    assert [(a["attempt"], a["status_code"]) for a in delivery["attempts"]] == [(1, 500), (2, 500), (3, 200)]
    assert delivery["attempts"][0]["reason"] == "HTTP 500"
    ids = {r.headers["webhook-id"] for r in receiver.received if r.path == "/flaky/one"}
    assert ids == {delivery["webhook_id"]}, "every attempt of one delivery has one webhook-id"
    # and the dashboard's job page lists the attempts
    page = app.test_client()
    assert log_in(page, make_key(admin=True)).status_code == 302
    html = page.get(f"/admin/jobs/{job_id}").get_data(as_text=True)
    assert 'id="deliveries"' in html and f"{receiver.url}/flaky/one" in html
    assert re.findall(r'<tr class="attempt-(\w+)">', html) == ["failed", "failed", "ok"]


def test_a_receiver_that_never_answers_is_given_up_on(client, auth, worker, receiver: Receiver) -> None:
    job_id = _submit(client, auth, f"{receiver.url}/silent")
    # three attempts of ZOLVE_WEBHOOK_TIMEOUT each (TEST_ENV), and the back-off between them
    (delivery,) = wait_until(_settled(client, auth, job_id), 60, 0.2, "the delivery to be given up")
    assert delivery["state"] == "failed" and len(delivery["attempts"]) == 3
    assert all(a["status_code"] is None and a["reason"] == "timeout" for a in delivery["attempts"])


def test_a_batch_is_delivered_once_when_its_last_job_finishes(
    client, auth, worker, receiver: Receiver
) -> None:
    items = [{"client_id": str(faces), "params": {"dice": 3, "faces": faces}} for faces in (3, 4, 5)]
    items.append({"client_id": "bad", "params": {"dice": 1}})
    batch = client.post(
        "/batches",
        json={"kind": "dice", "items": items, "callback_url": f"{receiver.url}/ok/batch"},
        headers=auth,
    ).get_json()
    some_job = batch["items"][0]["job_id"]
    deliveries = wait_until(_settled(client, auth, some_job), 30, 0.1, "the batch's delivery")
    assert [(d["target"], d["state"]) for d in deliveries] == [("batch", "delivered")]
    (got,) = receiver.bodies("/ok/batch")
    assert (
        got["id"] == batch["id"] and got["done"] is True and got["counts"] == {"succeeded": 3, "rejected": 1}
    )


@pytest.mark.parametrize(
    "url", ["http://10.1.2.3/hook", "http://192.168.0.9:8080/", "http://169.254.169.254/"]
)
def test_a_private_callback_is_refused_with_a_422(client, auth, url: str) -> None:
    answer = client.post("/jobs", json={"kind": "dice", "params": DICE, "callback_url": url}, headers=auth)
    assert answer.status_code == 422
    assert "private, loopback, link-local or multicast" in answer.get_json()["errors"]["callback_url"][0]
    batch = client.post(
        "/batches",
        json={"kind": "dice", "items": [{"client_id": "a", "params": DICE}], "callback_url": url},
        headers=auth,
    )
    assert batch.status_code == 422 and "callback_url" in batch.get_json()["errors"]
    not_a_url = client.post(
        "/jobs", json={"kind": "dice", "params": DICE, "callback_url": "ftp://x"}, headers=auth
    )
    assert not_a_url.status_code == 422 and "callback_url" in not_a_url.get_json()["errors"]


def test_a_retried_job_gets_a_delivery_of_its_own(client, auth, make_key, worker, receiver: Receiver) -> None:
    failing = {"kind": "test.sharded", "params": {"finalize": "unstorable"}, "fresh": True}
    body = {**failing, "callback_url": f"{receiver.url}/ok/retried"}
    job_id = client.post("/jobs", json=body, headers=auth).get_json()["id"]
    (first,) = wait_until(_settled(client, auth, job_id), 60, 0.1, "the first delivery")
    assert first["state"] == "delivered" and receiver.bodies("/ok/retried")[0]["state"] == "failed"
    assert client.post(f"/admin/jobs/{job_id}/retry", headers=make_key(admin=True)).status_code == 302

    def two_settled() -> list[dict] | None:
        found = _settled(client, auth, job_id)()
        return found if found and len(found) == 2 else None

    deliveries = wait_until(two_settled, 60, 0.1, "the retried job's own delivery")
    assert [d["state"] for d in deliveries] == ["delivered", "delivered"]
    got = [r for r in receiver.received if r.path == "/ok/retried"]
    assert len(got) == 2 and got[0].headers["webhook-id"] != got[1].headers["webhook-id"]


@contextmanager
def _both_addresses_on_one_port() -> Iterator[tuple[Receiver, list[str]]]:
    """The allowed receiver on 127.0.0.1 and, on the same port of 127.0.0.2 (an address not allowed), a
    server that notes each request it gets. Another test's client may hold that port on 127.0.0.2 (its
    connections there take ephemeral ports): then a new port is tried."""
    rebound: list[str] = []

    class Rebound(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook
            rebound.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    for _ in range(10):
        with webhook_receiver() as allowed:
            try:
                other = ThreadingHTTPServer(("127.0.0.2", int(allowed.url.rpartition(":")[2])), Rebound)
            except OSError:
                continue
            threading.Thread(target=other.serve_forever, daemon=True).start()
            try:
                yield allowed, rebound
            finally:
                other.shutdown()
                other.server_close()
            return
    pytest.fail("no port free on both 127.0.0.1 and 127.0.0.2 in 10 tries")


def test_the_delivery_connects_to_the_address_it_checked(settings, monkeypatch) -> None:
    """DNS rebinding: the name resolves to an allowed address when checked and to another when the
    connection is made (a resolver the attacker controls); the delivery must go to the checked one."""
    with _both_addresses_on_one_port() as (allowed, rebound):
        port = int(allowed.url.rpartition(":")[2])
        real, asked = socket.getaddrinfo, []

        def rebinding(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
            if host != "rebind.example":
                return real(host, port, *args, **kwargs)
            asked.append(host)
            return real("127.0.0.1" if len(asked) == 1 else "127.0.0.2", port, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", rebinding)
        own = replace(settings, webhook_allowed_networks="127.0.0.1/32")
        delivery = WebhookDelivery(id=1, url=f"http://rebind.example:{port}/hook")
        attempt = webhooks.send(own, webhooks.Message(delivery, b"{}", "whsec_" + "A" * 44))
        assert rebound == [], "the connection went to an address that was never checked"
        assert attempt.status_code == 200 and [r.path for r in allowed.received] == ["/hook"]
        assert allowed.received[0].headers["Host"] == f"rebind.example:{port}"
