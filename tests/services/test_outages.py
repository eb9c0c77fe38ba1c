"""What counts as a server being away, for the workers' repeated work (services.outages)."""

import pytest
from kombu.exceptions import OperationalError as BrokerUnreachable
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy.exc import IntegrityError, OperationalError

from services.outages import server_away


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly")),
        BrokerUnreachable("Error 111 connecting to 127.0.0.1:6379"),
        RedisConnectionError("Connection refused"),
        ConnectionRefusedError(111, "Connection refused"),
    ],
    ids=type,
)
def test_a_lost_connection_is_a_server_away(error: BaseException) -> None:
    assert server_away(error)


@pytest.mark.parametrize(
    "error", [IntegrityError("INSERT", {}, Exception("duplicate key")), KeyError("x"), ValueError("bad")]
)
def test_anything_else_is_not(error: BaseException) -> None:
    assert not server_away(error)
