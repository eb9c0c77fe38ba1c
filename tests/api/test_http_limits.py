"""What gunicorn refuses before the app sees a request is JSON too, under the limits the README states:
a real `zolve api` (gunicorn) answers an overlong header (431), URL (414) or a malformed request line (400)
with the API's error body, never gunicorn's HTML page; a URL within the limit reaches the app."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest
import requests

from tests.support import ApiServer
from zolve.servers import HEADER_FIELD_BYTES, HEADER_FIELDS, REQUEST_LINE_BYTES


def _json_error(response: requests.Response, code: int) -> dict:
    assert response.status_code == code, response.text[:300]
    assert response.headers["Content-Type"] == "application/json", response.text[:300]
    body = response.json()
    assert body["code"] == code and body["status"].lower() == response.reason.lower() and body["message"], (
        body
    )
    return body


@pytest.mark.parametrize(
    ("headers", "code", "says"),
    [
        ({"Authorization": "Bearer " + "x" * 10_000}, 431, f"{HEADER_FIELD_BYTES} bytes"),
        ({f"X-Many-{n}": "1" for n in range(HEADER_FIELDS + 1)}, 431, f"over {HEADER_FIELDS} headers"),
    ],
    ids=["10 KB Authorization", "too many headers"],
)
def test_overlong_headers_are_a_json_431(live_api: ApiServer, headers: dict, code: int, says: str) -> None:
    body = _json_error(requests.get(f"{live_api.url}/jobs", headers=headers, timeout=10), code)
    assert says in body["message"]


def test_an_overlong_url_is_a_json_414_and_one_within_the_limit_reaches_the_app(
    live_api: ApiServer, make_key: Callable[..., dict[str, str]]
) -> None:
    headers = make_key()
    too_long = requests.get(
        f"{live_api.url}/jobs?cursor=" + "x" * REQUEST_LINE_BYTES, headers=headers, timeout=10
    )
    assert f"{REQUEST_LINE_BYTES} bytes" in _json_error(too_long, 414)["message"]
    # a 5 KB query string (gunicorn's default limit was 4,094 bytes) is the app's to judge
    within = requests.get(f"{live_api.url}/jobs?cursor=" + "x" * 5000, headers=headers, timeout=10)
    assert "cursor" in _json_error(within, 422)["errors"]


def test_a_malformed_request_line_is_a_json_400(live_api: ApiServer) -> None:
    with socket.create_connection(("127.0.0.1", live_api.port), timeout=10) as conn:
        conn.sendall(b"GET /health HTTP/1.1 extra\r\nHost: x\r\n\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and b"Content-Type: application/json" in head, head
    assert b'"code": 400' in body and b"<html" not in body
