"""Signed webhooks: where a callback may go, the key's signing secret, one delivery attempt and its
back-off, and the deliveries a client may read.

Deliveries follow the Standard Webhooks convention: `webhook-id` (the same on every attempt of one
delivery), `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256>` over
`id.timestamp.body`, keyed with the base64-decoded part of the key's `whsec_...` secret. A receiver
checks them with `zolve_client.verify_signature`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import http.client
import ipaddress
import json
import os
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import certifi
import urllib3
import urllib3.connection
from cachetools import TTLCache, cached

from core.alarms import Alarm, AlarmClock
from core.config import Settings
from core.states import DeliveryState, batch_done
from schemas.jobs import Job as JobSchema
from services.context import Caller, Context
from services.errors import Invalid, NotFound
from services.reads.deliveries import delivery_views
from services.reads.jobs import JobView, job_view
from services.resources import job_fields
from store import batches as batch_store
from store import jobs as job_store
from store import webhooks as store
from store.models import Batch, Job, WebhookDelivery
from store.webhooks import SECRET_PREFIX, Attempt

#: answers that are worth another try: timeouts and server errors (and being told to slow down)
RETRIED_STATUSES = frozenset({408, 425, 429})
#: the attempts' deadlines, on one thread for the process (core.alarms)
DEADLINES = AlarmClock("zolve-webhook-deadlines")


class Reason(StrEnum):
    """Why an attempt did not deliver, in our own words (a 4xx or 5xx is `HTTP <status>`): the delivery
    log never holds the receiver's bytes or an exception's text, which would let a client read internal
    services or scan ports through it."""

    TIMEOUT = "timeout"
    CONNECTION_REFUSED = "connection refused"
    CONNECTION_FAILED = "connection failed"
    TLS = "TLS error"
    INVALID_RESPONSE = "invalid response"
    ADDRESS_NOT_ALLOWED = "address not allowed"
    UNRESOLVED = "host does not resolve"


# -- where a callback may go ------------------------------------------------------------------------
def _allowed_networks(settings: Settings) -> list[Network]:
    cidrs = [cidr.strip() for cidr in settings.webhook_allowed_networks.split(",")]
    return [ipaddress.ip_network(cidr) for cidr in cidrs if cidr]


Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: IPv6 forms whose last 32 bits are an IPv4 address the packets end up at: NAT64's well-known prefix,
#: IPv4-translated (RFC 2765) and IPv4-compatible (deprecated, but still accepted by some stacks)
_LAST_32_BITS = tuple(ipaddress.ip_network(cidr) for cidr in ("64:ff9b::/96", "::ffff:0:0:0/96", "::/96"))
#: NAT64's local-use prefix (RFC 8215): where the IPv4 address sits depends on the operator's prefix
#: length, so it cannot be judged; refused unless allowed
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


def _embedded_ipv4(address: Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses an IPv6 address carries (IPv4-mapped, 6to4, Teredo's server and client, NAT64
    and the other last-32-bit forms), or None when it carries none."""
    if address.version == 4:
        return None
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)
    if any(address in prefix for prefix in _LAST_32_BITS):
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    return None


def _may_call(address: Address, allowed: list[Network]) -> bool:
    """Public, or in a network the operator allowed; an address carrying IPv4 is judged by the IPv4
    (`2002:7f00:1::`, 6to4 for 127.0.0.1, is loopback however global its prefix looks)."""
    if any(address in network for network in allowed):
        return True
    inside = _embedded_ipv4(address)
    if inside is not None:
        return all(_public(ipv4) or any(ipv4 in network for network in allowed) for ipv4 in inside)
    return _public(address) and address not in _NAT64_LOCAL


def _public(address: Address) -> bool:
    """One host on the internet. `is_global` also holds for multicast groups (224.0.0.0/4, ff00::/8:
    a local network's devices) and IPv6's deprecated site-local fec0::/10 (a site's own hosts)."""
    site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    return address.is_global and not address.is_multicast and not site_local


@dataclass(frozen=True)
class Target:
    """Where a callback goes: the addresses its host resolved to when checked (the only ones it is sent
    to: a second lookup could answer otherwise) and what the request names."""

    scheme: str
    host: str
    port: int
    host_header: str
    path: str
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    reason: Reason
    message: str


#: at submit, a callback host's lookup is waited for this long (a resolver that never answers would hold the
#: request for its own timeouts and retries), and its answer, or its lack of one, is kept LOOKUP_TTL seconds
#: (a client naming one host in every submit waits on the resolver once)
SUBMIT_LOOKUP_SECONDS = 2.0
LOOKUP_TTL = 30.0
#: the lookups themselves, which cannot be interrupted; one that outlives its wait finishes here
_lookups = ThreadPoolExecutor(8, thread_name_prefix="zolve-lookup")

#: a host's addresses, or why there are none
Lookup = Callable[[str, int], "tuple[str, ...] | str"]


def _resolve(host: str, port: int) -> tuple[str, ...] | str:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, ValueError, UnicodeError):
        return f"the host {host!r} does not resolve"
    return tuple(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))


@cached(TTLCache(maxsize=4096, ttl=LOOKUP_TTL), lock=threading.Lock())
def _resolve_at_submit(host: str, port: int) -> tuple[str, ...] | str:
    try:
        return _lookups.submit(_resolve, host, port).result(SUBMIT_LOOKUP_SECONDS)
    except TimeoutError:
        return f"the host {host!r} did not resolve within {SUBMIT_LOOKUP_SECONDS:g} s"


def _check(settings: Settings, url: str, lookup: Lookup = _resolve) -> Target | Refusal:
    """The callback's checked Target, or why it may not be called."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return Refusal(Reason.ADDRESS_NOT_ALLOWED, "must be an http or https URL with a host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return Refusal(Reason.UNRESOLVED, f"the host {parts.hostname!r} does not resolve")
    answer = lookup(parts.hostname, port)
    if isinstance(answer, str):
        return Refusal(Reason.UNRESOLVED, answer)
    addresses = list(answer)
    allowed = _allowed_networks(settings)
    for text in addresses:
        address = ipaddress.ip_address(text)
        if _may_call(address, allowed):
            continue
        return Refusal(
            Reason.ADDRESS_NOT_ALLOWED,
            f"resolves to {address}, a private, loopback, link-local or multicast address "
            "(the operator may allow such networks with ZOLVE_WEBHOOK_ALLOWED_NETWORKS)",
        )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = parts.netloc.rpartition("@")[2]
    return Target(parts.scheme, parts.hostname, port, host_header, path, tuple(addresses))


def refused_address(settings: Settings, url: str) -> str | None:
    """Why `url` may not be called (its host resolves to a private, loopback, link-local or otherwise
    non-public address outside ZOLVE_WEBHOOK_ALLOWED_NETWORKS, or does not resolve within
    SUBMIT_LOOKUP_SECONDS), or None."""
    target = _check(settings, url, _resolve_at_submit)
    return target.message if isinstance(target, Refusal) else None


def checked_callback_url(settings: Settings, url: str | None, field: str = "callback_url") -> str | None:
    """The URL if a webhook may be sent there; otherwise a 422 on `field`."""
    if url is None:
        return None
    problem = refused_address(settings, url)
    if problem:
        raise Invalid({field: [problem]})
    return url


# -- the key's secret -------------------------------------------------------------------------------
def secret(ctx: Context, caller: Caller, *, rotate: bool = False) -> str:
    with ctx.db.session() as session:
        return store.secret(session, caller.key_id, rotate=rotate)


def signature(secret_text: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the secret's decoded bytes."""
    key = base64.b64decode(secret_text.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


# -- sending ----------------------------------------------------------------------------------------
def _job_body(job: JobView) -> dict[str, Any]:
    fields = job_fields(job, is_admin=False)
    links = {"self": f"/jobs/{job.id}", "events": f"/jobs/{job.id}/events"}
    body: dict[str, Any] = JobSchema().dump({**fields, "links": links})
    return body


def _batch_body(session: Any, batch: Batch) -> dict[str, Any]:
    counts = batch_store.item_counts(session, batch.id)
    return {
        "id": str(batch.id),
        "kind": batch.kind,
        "created_at": batch.created_at.isoformat(),
        "item_count": batch.item_count,
        "job_count": batch.job_count,
        "counts": counts,
        "done": batch_done(counts),
        "links": {"self": f"/batches/{batch.id}"},
    }


@dataclass(frozen=True)
class Message:
    delivery: WebhookDelivery
    body: bytes
    secret: str


def _message(ctx: Context, delivery_id: int) -> Message | None:
    """Claim the delivery's attempt and build what it sends; None when there is nothing to send now."""
    with ctx.db.session() as session:
        delivery = store.claim(session, delivery_id, ctx.settings.webhook_timeout + 30)
        if delivery is None:
            return None
        if delivery.job_id is not None:  # the delivery's job or batch exists: its key cascades
            body = _job_body(job_view(session.get_one(Job, delivery.job_id)))
        else:
            body = _batch_body(session, session.get_one(Batch, delivery.batch_id))
        key_secret = store.secret(session, delivery.owner_id)
    return Message(delivery, json.dumps(body, separators=(",", ":")).encode(), key_secret)


class _Cuttable:
    """A urllib3 connection that a deadline can cut off at whatever stage the exchange is (connect, TLS
    handshake, send, the answer's head): from the moment its socket exists it holds a descriptor of its
    own on it, since a TLS socket takes the first one over and urllib3 may close that one itself."""

    _twin: socket.socket | None = None

    def _new_conn(self) -> socket.socket:
        sock: socket.socket = super()._new_conn()  # type: ignore[misc]
        self._twin = socket.socket(fileno=os.dup(sock.fileno()))
        return sock

    def cut(self) -> None:
        if self._twin is not None:
            with contextlib.suppress(OSError):
                self._twin.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        super().close()  # type: ignore[misc]
        if self._twin is not None:
            self._twin.close()
            self._twin = None


class _HTTPConnection(_Cuttable, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_Cuttable, urllib3.connection.HTTPSConnection):
    pass


class _Deadline:
    """One total deadline for an attempt. Socket timeouts bound each read, not the whole: a receiver that
    sends a byte now and then would hold the attempt as long as it likes. When the time is up, the
    connection in use is shut down, which ends any connect, send or read blocked on it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.passed = False
        self._lock = threading.Lock()
        self._connection: _Cuttable | None = None
        self._alarm: Alarm | None = None

    def __enter__(self) -> _Deadline:
        self._alarm = DEADLINES.after(self.seconds, self._cut)
        return self

    def __exit__(self, *_: object) -> None:
        if self._alarm is not None:
            self._alarm.cancel()

    def remaining(self) -> float:
        return max(self.ends - time.monotonic(), 0.001)

    def watch(self, connection: _Cuttable) -> None:
        with self._lock:
            self._connection = connection
            if self.passed:
                connection.cut()

    def release(self) -> None:
        """Stop watching the connection (before it is closed: never cut one being closed)."""
        with self._lock:
            self._connection = None

    def _cut(self) -> None:
        with self._lock:
            self.passed = True
            if self._connection is not None:
                self._connection.cut()


def _connection(target: Target, address: str, timeout: float) -> _HTTPConnection | _HTTPSConnection:
    """A connection to `address` itself; over TLS it still names and verifies the URL's host."""
    if target.scheme == "https":
        return _HTTPSConnection(
            address,
            target.port,
            timeout=timeout,
            server_hostname=target.host,
            assert_hostname=target.host,
            cert_reqs="CERT_REQUIRED",
            ca_certs=certifi.where(),
        )
    return _HTTPConnection(address, target.port, timeout=timeout)


def _status(target: Target, address: str, request: _Request, deadline: _Deadline) -> int:
    """POST to one address; only the status line and headers are read, never the body."""
    connection = _connection(target, address, deadline.remaining())
    deadline.watch(connection)
    try:
        connection.connect()
        connection.request(
            "POST", target.path, body=request.body, headers=request.headers, preload_content=False
        )
        return connection.getresponse().status
    finally:
        deadline.release()
        connection.close()


def _post(target: Target, request: _Request, timeout: float) -> int:
    """POST to the first checked address that takes the connection, all within `timeout` seconds."""
    with _Deadline(timeout) as deadline:
        try:
            for address in target.addresses[:-1]:
                try:
                    return _status(target, address, request, deadline)
                except urllib3.exceptions.NewConnectionError:
                    if deadline.passed:
                        raise
            return _status(target, target.addresses[-1], request, deadline)
        except Exception as exc:
            if deadline.passed:
                raise TimeoutError("the attempt's deadline passed") from exc
            raise


def _reason(exc: BaseException) -> Reason:
    """Our own word for what went wrong; the exception's text (the receiver's bytes, addresses, ports)
    is never kept."""
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        refused = isinstance(exc.__cause__, ConnectionRefusedError)
        return Reason.CONNECTION_REFUSED if refused else Reason.CONNECTION_FAILED
    if isinstance(exc, (TimeoutError, urllib3.exceptions.TimeoutError)):
        return Reason.TIMEOUT
    if isinstance(exc, (ssl.SSLError, ssl.CertificateError, urllib3.exceptions.SSLError)):
        return Reason.TLS
    if isinstance(exc, (http.client.HTTPException, urllib3.exceptions.ProtocolError)):
        return Reason.INVALID_RESPONSE
    return Reason.CONNECTION_FAILED


@dataclass(frozen=True)
class _Request:
    body: bytes
    headers: dict[str, str]


def _request(target: Target, message: Message) -> _Request:
    message_id, timestamp = f"msg_{message.delivery.id}", int(time.time())
    headers = {
        "Host": target.host_header,
        "content-type": "application/json",
        "user-agent": "zolve-webhooks/1",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(message.secret, message_id, timestamp, message.body),
    }
    return _Request(message.body, headers)


def send(settings: Settings, message: Message) -> Attempt:
    """One attempt at sending the message, to an address its host was just checked to resolve to (the
    check is made again before each attempt: DNS may have changed), within ZOLVE_WEBHOOK_TIMEOUT in all.
    Only the status is kept, with a reason of our own when it is not a success."""
    target = _check(settings, message.delivery.url)
    if isinstance(target, Refusal):
        return Attempt(None, None, target.reason)
    started = time.monotonic()
    try:
        status = _post(target, _request(target, message), settings.webhook_timeout)
    except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, ValueError) as exc:
        return Attempt(None, _since(started), _reason(exc))
    return Attempt(status, _since(started), f"HTTP {status}" if status >= 400 else None)


def _since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def backoff(settings: Settings, attempt: int) -> float:
    """Seconds before try `attempt + 1`: the base, doubled per try, capped."""
    doubled: float = settings.webhook_backoff * 2 ** (attempt - 1)  # int ** int is typed Any
    return min(doubled, settings.webhook_backoff_max)


def _retried(attempt: Attempt) -> bool:
    """Timeouts, unreachable receivers and 5xx are tried again; a receiver that refused (4xx) is not, nor
    an address the check refused."""
    if attempt.status_code is None:
        return attempt.reason not in (Reason.ADDRESS_NOT_ALLOWED, Reason.UNRESOLVED)
    return attempt.status_code >= 500 or attempt.status_code in RETRIED_STATUSES


def deliver(ctx: Context, delivery_id: int) -> float | None:
    """One attempt at a delivery, recorded; returns the seconds until the next attempt, or None when
    there is none (delivered, given up, or nothing to do)."""
    message = _message(ctx, delivery_id)
    if message is None:
        return None
    attempt = send(ctx.settings, message)
    tries = message.delivery.attempts
    retry_in = None
    if _retried(attempt) and tries < ctx.settings.webhook_max_attempts:
        retry_in = backoff(ctx.settings, tries)
    with ctx.db.session() as session:
        state = store.record_attempt(session, message.delivery, attempt, retry_in=retry_in)
    return retry_in if state == DeliveryState.PENDING else None


# -- reading ----------------------------------------------------------------------------------------
def deliveries(ctx: Context, caller: Caller, job_id: uuid.UUID) -> list[dict[str, Any]]:
    with ctx.db.session() as session:
        if job_store.get_job(session, job_id, caller.owner_filter) is None:
            raise NotFound("no such job")
        return delivery_views(session, job_id)
