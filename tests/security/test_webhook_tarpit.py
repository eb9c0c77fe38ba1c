"""A webhook receiver that trickles its answer cannot hold a delivery past ZOLVE_WEBHOOK_TIMEOUT (1 s
here), nor another client's job: the probe's tarpit (`500` with `Content-Length: 30`, then a byte
now and then) held each attempt 60 s with a 5-s timeout, because the timeout bounded each socket read and
the whole body was read (issue 37, item 1). Here the tarpit sends a byte every 0.25 s, faster than the
timeout (bench/webhook_tarpit.py), through a real worker on the webhook queue beside a solver worker."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import time

import certifi
import pytest

from bench.webhook_tarpit import tarpit
from core.config import replace
from services import webhooks
from store import keys
from store.models import WebhookDelivery
from tests.support import poll_job, private_stack, wait_until

TIMEOUT = 1.0  # ZOLVE_WEBHOOK_TIMEOUT in this module
#: faster than the timeout: 30 bytes would hold a reader that reads them all 7.5 s
TRICKLE_SECONDS = 0.25


def test_a_tarpit_receiver_is_cut_off_within_the_timeout(settings, tmp_path) -> None:
    with (
        tarpit(TRICKLE_SECONDS) as pit,
        private_stack(settings, tmp_path / "stack", env={"ZOLVE_WEBHOOK_TIMEOUT": str(TIMEOUT)}) as stack,
        stack.split_workers(tmp_path),
    ):
        jobs = {path: _submit(stack, stack.headers, f"{pit.url}{path}") for path in ("/body", "/head")}
        wait_until(lambda: pit.open, 30, 0.02, "the tarpit to hold a delivery")
        # meanwhile another client's short job runs at once
        with stack.db.session() as session:
            other = {"Authorization": f"Bearer {keys.create_key(session, name='other').key}"}
        started = time.monotonic()
        short = _submit(stack, other, None)
        assert poll_job(stack.client, other, short, 30)["state"] == "succeeded"
        assert time.monotonic() - started < 5, "the short job waited behind the tarpit"
        for path, job_id in jobs.items():
            (delivery,) = wait_until(_settled(stack, job_id), 60, 0.1, f"the delivery to {path}")
            assert delivery["state"] == "failed" and len(delivery["attempts"]) == 3
            assert len(pit.held[path]) == 3, pit.held
            assert max(pit.held[path]) < TIMEOUT + 1, f"{path} held {pit.held[path]} s"
            assert all(a["latency_ms"] < (TIMEOUT + 1) * 1000 for a in delivery["attempts"])
        body, head = (_reasons(stack, jobs[path]) for path in ("/body", "/head"))
        assert body == ["HTTP 500"] * 3 and head == ["timeout"] * 3


def _submit(stack, headers: dict[str, str], callback_url: str | None) -> str:
    body = {"kind": "dice", "params": {"dice": 3, "faces": 3}, "fresh": True, "callback_url": callback_url}
    answer = stack.client.post("/jobs", json=body, headers=headers)
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["id"]


def _deliveries(stack, job_id: str) -> list[dict]:
    return stack.client.get(f"/jobs/{job_id}/deliveries", headers=stack.headers).get_json()["items"]


def _settled(stack, job_id: str):  # type: ignore[no-untyped-def]
    def check() -> list[dict] | None:
        found = _deliveries(stack, job_id)
        return found if found and all(d["state"] != "pending" for d in found) else None

    return check


def _reasons(stack, job_id: str) -> list[str]:
    (delivery,) = _deliveries(stack, job_id)
    return [a["reason"] for a in delivery["attempts"]]


@pytest.fixture
def trusted_tls(tmp_path, monkeypatch) -> ssl.SSLContext:  # type: ignore[no-untyped-def]
    """A server context with a self-signed certificate for 127.0.0.1, which deliveries trust (the CA
    bundle they verify with is this certificate)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    monkeypatch.setattr(certifi, "where", lambda: str(cert))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def test_a_tarpit_over_tls_is_cut_off_within_the_timeout(settings, trusted_tls: ssl.SSLContext) -> None:
    """Over TLS the socket the deadline shuts down is the one the TLS socket took over."""
    with tarpit(TRICKLE_SECONDS, tls=trusted_tls) as pit:
        for path, reason in (("/head", "timeout"), ("/body", "HTTP 500")):
            delivery = WebhookDelivery(id=1, url=f"{pit.url}{path}")
            message = webhooks.Message(delivery, b"{}", "whsec_" + "A" * 44)
            attempt = webhooks.send(replace(settings, webhook_timeout=TIMEOUT), message)
            assert attempt.reason == reason and attempt.latency_ms < (TIMEOUT + 1) * 1000, attempt
        wait_until(lambda: len(pit.held) == 2, 10, 0.05, "the tarpit to see both connections closed")
        assert max(max(held) for held in pit.held.values()) < TIMEOUT + 1, pit.held
