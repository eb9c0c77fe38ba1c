"""No credential reaches a log (issue 32), and the access log says what each client was answered.

gunicorn gave each access record, as its arguments, every request header, response header and WSGI
environ variable. When the access log could not be written (its stdout a closed pipe: `zolve up | head`, a
log shipper that died), Python's logging printed the failed record, message and arguments, to stderr: the
`Authorization: Bearer` key and the dashboard's session cookie with them. And gunicorn's warning on a
header line without a colon quotes the line whole, a mistyped `Authorization Bearer <key>` included. The
API's edge (zolve.edge, zolve.access_log) now writes the access log, of the request line, the referrer and
the user agent only; granian refuses such a header line without quoting it.

A real `zolve api`, its stdout a closed pipe, is asked with a key and with a signed-in dashboard session;
its stderr (the error log) must name neither. Another, its stdout a file, is read back."""

from __future__ import annotations

import re
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from tests.api.test_admin import TOKEN
from tests.security.helpers import bearer_token
from tests.support import ApiServer, free_port, installed_popen, stop_group, wait_until


@dataclass
class Api:
    port: int
    errors: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def printed(self) -> str:
        return self.errors.read_text(errors="replace")


@pytest.fixture(scope="module")
def api(worker_env, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """`zolve api` whose stdout (the access log) is a pipe nobody reads any more; its stderr in a file."""
    port, errors = free_port(), tmp_path_factory.mktemp("access-log") / "stderr.log"
    env = {**worker_env, "ZOLVE_RATE_LIMIT": "", "ZOLVE_SUBMIT_RATE_LIMIT": "", "ZOLVE_SECRET_KEY": "test"}
    with open(errors, "wb") as stderr:
        process = installed_popen(
            ["api", "--port", str(port), "--workers", "1", "--threads", "2"],
            env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
        )
    process.stdout.close()
    served = Api(port, errors)

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the API exited early; stderr:\n{served.printed()[-3000:]}")
        try:
            return requests.get(f"{served.url}/health", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_until(answers, 60, 0.2, "the API to answer")
        yield served
    finally:
        stop_group(process)


def test_a_failing_access_log_prints_no_key_nor_session(api: Api, make_key, closing) -> None:
    admin = make_key(admin=True)
    key = bearer_token(admin)
    # the API with the key
    assert requests.get(f"{api.url}/jobs", headers=admin, timeout=10).status_code == 200
    # the dashboard: signing in sets the session cookie, which the next page sends
    browser = closing.enter_context(requests.Session())
    form = TOKEN.search(browser.get(f"{api.url}/admin/login", timeout=10).text).group(1)
    signed = browser.post(
        f"{api.url}/admin/login", data={"key": key, "csrf_token": form}, allow_redirects=False, timeout=10
    )
    assert signed.status_code == 302, signed.status_code
    session = browser.cookies.get("zolve_admin")
    assert session
    assert browser.get(f"{api.url}/admin/jobs", timeout=10).status_code == 200
    # the access log fails to be written (and says so on stderr) once its first records are flushed
    wait_until(lambda: "access log cannot be written" in api.printed(), 30, 0.1, "the failed access log")
    marker = uuid.uuid4().hex
    assert requests.get(f"{api.url}/jobs/{marker}", headers=admin, timeout=10).status_code == 404
    assert requests.get(f"{api.url}/health", timeout=10).status_code == 200, "the API goes on"
    printed = api.printed()
    assert printed.count("access log cannot be written") == 1
    assert key not in printed and key[:12] not in printed
    assert session not in printed and marker not in printed


def test_a_header_line_without_a_colon_is_refused_unquoted(api: Api, make_key) -> None:
    """`Authorization Bearer <key>` (the colon forgotten): refused with 400, and no log quotes it."""
    key = bearer_token(make_key())
    head = f"GET /jobs HTTP/1.1\r\nHost: x\r\nAuthorization Bearer {key}\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", api.port), timeout=10) as sock:
        sock.sendall(head.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert key.encode() not in answer.split(b"\r\n\r\n", 1)[0]
    # the refusal is written after any warning the server would log about it: that is on stderr by now
    assert key not in api.printed()


def test_the_access_log_names_each_request_and_its_answer_and_no_key(worker_env, tmp_path, make_key) -> None:
    """Combined format: address, time, request line, status, size, referrer, user agent; the edge's own
    refusals (413 here) too; a client that leaves before its body's end is a 499; a client's bytes in it
    escaped."""
    env = {**worker_env, "ZOLVE_RATE_LIMIT": "", "ZOLVE_SUBMIT_RATE_LIMIT": "", "ZOLVE_SECRET_KEY": "test"}
    env["ZOLVE_MAX_BODY_BYTES"] = "1000"
    out = tmp_path / "api.log"  # its stdout (the access log) and stderr
    server = ApiServer(env, out).start()
    try:
        headers = make_key()
        marker = uuid.uuid4().hex
        agent = 'probe "quoted" \xe9'  # sent in latin-1
        url = server.url
        answer = requests.get(f"{url}/jobs/{marker}", headers={**headers, "User-Agent": agent}, timeout=10)
        assert answer.status_code == 404
        assert requests.post(f"{url}/jobs?{marker}", data=b"x" * 2000, timeout=10).status_code == 413
        head = f"POST /jobs?{marker}-gone HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n"
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(head.encode() + b'{"kind": ')  # and leaves
        wait_until(lambda: out.read_text().count(marker) == 3, 10, 0.1, "the three records")
    finally:
        server.stop()
    records = [line for line in out.read_text().splitlines() if marker in line]
    found = re.fullmatch(
        r'127\.0\.0\.1 - - \[[^]]+\] "GET /jobs/(\w+) HTTP/1\.1" 404 (\d+) "-" "(.*)"', records[0]
    )
    assert found and found.group(1) == marker, records[0]
    assert found.group(3) == "probe \\x22quoted\\x22 \\xe9"
    assert re.fullmatch(
        rf'127\.0\.0\.1 - - \[[^]]+\] "POST /jobs\?{marker} HTTP/1\.1" 413 \d+ "-" "[^"]*"', records[1]
    )
    assert re.fullmatch(
        rf'127\.0\.0\.1 - - \[[^]]+\] "POST /jobs\?{marker}-gone HTTP/1\.1" 499 0 .*', records[2]
    )
    assert bearer_token(headers) not in out.read_text()
