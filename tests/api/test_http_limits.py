"""What is refused before the app sees a request, under the limits the README states, against a real
`zolve api`: an overlong header (431) or URL (414) is refused by zolve.edge in the API's JSON error body;
a URL within the limit reaches the app. What granian's parser refuses before any code of ours runs (a head
of over 100 fields, a malformed request line) is its bare status, with no body to mislead anyone."""

from __future__ import annotations

import socket
from collections.abc import Callable

import requests

from tests.support import ApiServer
from zolve.edge import MAX_FIELD_BYTES, MAX_FIELDS, MAX_TARGET_BYTES


def _json_error(response: requests.Response, code: int) -> dict:
    assert response.status_code == code, response.text[:300]
    assert response.headers["Content-Type"] == "application/json", response.text[:300]
    body = response.json()
    assert body["code"] == code and body["status"].lower() == response.reason.lower() and body["message"], (
        body
    )
    return body


def test_an_overlong_header_is_a_json_431(live_api: ApiServer) -> None:
    headers = {"Authorization": "Bearer " + "x" * 10_000}
    body = _json_error(requests.get(f"{live_api.url}/jobs", headers=headers, timeout=10), 431)
    assert f"{MAX_FIELD_BYTES} bytes" in body["message"]


def test_too_many_headers_are_refused_by_the_parser(live_api: ApiServer) -> None:
    headers = {f"X-Many-{n}": "1" for n in range(MAX_FIELDS + 1)}
    response = requests.get(f"{live_api.url}/jobs", headers=headers, timeout=10)
    assert response.status_code == 431 and response.content == b""


def test_an_overlong_url_is_a_json_414_and_one_within_the_limit_reaches_the_app(
    live_api: ApiServer, make_key: Callable[..., dict[str, str]]
) -> None:
    headers = make_key()
    too_long = requests.get(
        f"{live_api.url}/jobs?cursor=" + "x" * MAX_TARGET_BYTES, headers=headers, timeout=10
    )
    assert f"{MAX_TARGET_BYTES} bytes" in _json_error(too_long, 414)["message"]
    # a 5 KB query string (gunicorn's default limit, before granian, was 4,094 bytes) is the app's to judge
    within = requests.get(f"{live_api.url}/jobs?cursor=" + "x" * 5000, headers=headers, timeout=10)
    assert "cursor" in _json_error(within, 422)["errors"]


def test_a_malformed_request_line_is_a_400(live_api: ApiServer) -> None:
    with socket.create_connection(("127.0.0.1", live_api.port), timeout=10) as conn:
        conn.sendall(b"GET /health HTTP/1.1 extra\r\nHost: x\r\n\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and body == b"", answer
