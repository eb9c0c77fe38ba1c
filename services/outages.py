"""Which failures mean that a server the workers need is away for a while (PostgreSQL restarting, Redis
gone): those are logged once per outage (core.outages); any other is logged in full."""

from __future__ import annotations

from kombu.exceptions import OperationalError as BrokerUnreachable
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeout
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError


def server_away(error: BaseException) -> bool:
    if isinstance(error, OperationalError | InterfaceError | BrokerUnreachable | RedisConnectionError):
        return True
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return True
    return isinstance(error, RedisTimeout | ConnectionError | TimeoutError)


def database_away(error: DBAPIError) -> bool:
    """PostgreSQL itself away (unreachable, restarting, shutting down), not a statement it refused (a
    statement timeout, a deadlock: those come with a SQLSTATE of their class, the server answering)."""
    if error.connection_invalidated or isinstance(error, InterfaceError):
        return True
    sqlstate = getattr(error.orig, "sqlstate", None)
    return isinstance(error, OperationalError) and (not sqlstate or sqlstate.startswith(("08", "57P")))
