"""Issue 37 ("Also seen"): the receiver's check, zolve_client.verify_signature, refuses a delivery sent
again as it was (a replay inside the timestamp window), yet takes the service's own retries, which sign the
same webhook-id with a new timestamp."""

from __future__ import annotations

import base64
import secrets
import threading
import time
import uuid

from zolve_client import SeenMessages, verify_signature

from services.webhooks import signature

BODY = b'{"id": "job", "state": "succeeded"}'


def _secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def _signed(secret: str, message_id: str, timestamp: int, body: bytes = BODY) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message_id, timestamp, body),
    }


def test_a_replayed_delivery_is_refused() -> None:
    secret, message_id = _secret(), f"msg_{uuid.uuid4()}"
    headers = _signed(secret, message_id, int(time.time()))
    assert verify_signature(secret, headers, BODY)
    assert not verify_signature(secret, headers, BODY), "the same signed message again is a replay"
    assert not verify_signature(secret, {k.upper(): v for k, v in headers.items()}, BODY)


def test_a_retry_of_the_same_delivery_is_taken() -> None:
    secret, message_id = _secret(), f"msg_{uuid.uuid4()}"
    now = int(time.time())
    assert verify_signature(secret, _signed(secret, message_id, now - 5), BODY)
    assert verify_signature(secret, _signed(secret, message_id, now), BODY), "a retry signs a new timestamp"


def test_a_forged_message_does_not_use_up_the_genuine_one() -> None:
    secret, message_id, now = _secret(), f"msg_{uuid.uuid4()}", int(time.time())
    forged = {**_signed(secret, message_id, now), "webhook-signature": "v1," + "A" * 44}
    assert not verify_signature(secret, forged, BODY)
    assert verify_signature(secret, _signed(secret, message_id, now), BODY)


def test_concurrent_replays_pass_once() -> None:
    secret, seen = _secret(), SeenMessages()
    headers = _signed(secret, f"msg_{uuid.uuid4()}", int(time.time()))
    barrier, passed = threading.Barrier(16), []

    def receive() -> None:
        barrier.wait()
        passed.append(verify_signature(secret, headers, BODY, seen=seen))

    threads = [threading.Thread(target=receive) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert passed.count(True) == 1


def test_a_stale_timestamp_is_still_refused() -> None:
    secret = _secret()
    assert not verify_signature(secret, _signed(secret, "msg_old", int(time.time()) - 301), BODY)
