"""Checking a webhook delivery on the receiving side: the service signs each one as Standard Webhooks
describe (`webhook-id`, `webhook-timestamp`, `webhook-signature`)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
import time
from collections.abc import Mapping


class SeenMessages:
    """The signed messages (webhook-id and timestamp) one receiver process has accepted, each kept until
    its timestamp is out of every window (so the memory holds one window's deliveries, at most `maxsize`).
    The service's retries sign the same webhook-id with a new timestamp: they are new messages; the same
    id and timestamp again is a replay. Receivers in several processes need a shared store instead (e.g.
    Redis `SET webhook-id:timestamp NX EX 600`)."""

    def __init__(self, maxsize: int = 100_000) -> None:
        self._seen: dict[tuple[str, int], float] = {}
        self._maxsize = maxsize
        self._lock = threading.Lock()

    def first_time(self, message_id: str, timestamp: int, keep_for: float) -> bool:
        """Record the message; False if it was recorded before (a replay)."""
        now = time.monotonic()
        with self._lock:
            if len(self._seen) >= self._maxsize:
                self._forget_expired(now)
            if (message_id, timestamp) in self._seen or len(self._seen) >= self._maxsize:
                return False  # full of live messages: refuse rather than forget one (it could be replayed)
            self._seen[(message_id, timestamp)] = now + keep_for
            return True

    def _forget_expired(self, now: float) -> None:
        self._seen = {message: until for message, until in self._seen.items() if until > now}


#: the messages this process has accepted, when verify_signature is given no store of its own
SEEN = SeenMessages()


def verify_signature(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    tolerance: float = 300,
    seen: SeenMessages | None = None,
) -> bool:
    """Whether a webhook delivery is the service's, and new: its `webhook-signature` (Standard Webhooks:
    `v1,` base64 HMAC-SHA256 of "id.timestamp.body", keyed with the decoded part of your `whsec_` secret)
    is right, its `webhook-timestamp` within `tolerance` seconds of now, and the same signed message
    (webhook-id and timestamp) was not accepted before by `seen` (default: this process's `SEEN`). A retry
    of a delivery is signed anew with its own timestamp, so it passes; a replay does not."""
    lowered = {name.lower(): value for name, value in headers.items()}
    try:
        message_id, timestamp = lowered["webhook-id"], int(lowered["webhook-timestamp"])
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except (KeyError, ValueError):
        return False
    if abs(time.time() - timestamp) > tolerance:
        return False
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [part.partition(",") for part in lowered.get("webhook-signature", "").split()]
    if not any(version == "v1" and hmac.compare_digest(expected, sig) for version, _, sig in offered):
        return False
    # kept for two windows: a timestamp up to `tolerance` ahead of this clock stays valid that long
    return (SEEN if seen is None else seen).first_time(message_id, timestamp, 2 * tolerance)
