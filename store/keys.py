"""API keys: shown once at creation, stored only as a SHA-256 hash."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from store.models import ApiKey

KEY_PREFIX = "zk_"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class NewKey:
    id: int
    key: str
    is_admin: bool


def create_key(
    session: Session,
    *,
    name: str,
    is_admin: bool = False,
    weight: float = 1.0,
    max_in_flight: int | None = None,
) -> NewKey:
    """A new key (`weight`, `max_in_flight`: its share of the workers, see store.dispatch)."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(
        name=name,
        prefix=key[:10],
        key_hash=hash_key(key),
        is_admin=is_admin,
        weight=weight,
        max_in_flight=max_in_flight,
    )
    session.add(row)
    session.flush()
    return NewKey(id=row.id, key=key, is_admin=is_admin)


def authenticate(session: Session, key: str) -> ApiKey | None:
    if not key.startswith(KEY_PREFIX):
        return None
    return session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_key(key), ApiKey.revoked_at.is_(None)))


def get_key(session: Session, key_id: int) -> ApiKey | None:
    """The key, revoked or not."""
    return session.get(ApiKey, key_id)


def has_admin(session: Session) -> bool:
    return (
        session.scalar(
            select(ApiKey.id).where(ApiKey.is_admin.is_(True), ApiKey.revoked_at.is_(None)).limit(1)
        )
        is not None
    )


def list_keys(session: Session) -> list[ApiKey]:
    """Every key, oldest first (revoked ones too: their jobs still name them)."""
    return list(session.scalars(select(ApiKey).order_by(ApiKey.id)))


def revoke_key(session: Session, key_id: int) -> ApiKey | None:
    """Revoke a key (a second revocation keeps the first time). None if there is no such key."""
    row = session.get(ApiKey, key_id)
    if row is not None and row.revoked_at is None:
        row.revoked_at = session.scalar(select(func.now()))
        session.flush()
    return row


def set_share(session: Session, key_id: int, *, weight: float, max_in_flight: int | None) -> ApiKey | None:
    """Change the key's weight and its cap of work in flight (None: the service's); its next release
    uses them. None if there is no such key."""
    row = session.get(ApiKey, key_id)
    if row is not None:
        row.weight, row.max_in_flight = weight, max_in_flight
        session.flush()
    return row


def end_sessions(session: Session, key_id: int) -> None:
    """End every dashboard session of the key: the sessions signed in before this are refused."""
    session.execute(
        update(ApiKey).where(ApiKey.id == key_id).values(session_generation=ApiKey.session_generation + 1)
    )
