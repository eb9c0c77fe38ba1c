"""zolve.access_log: an API process's records reach stdout in their time, and a stdout that does not keep
up never holds its event loop: what cannot wait is dropped, and counted on stderr."""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time

from tests.loops import run_on_own_loop
from zolve.access_log import FLUSH_SECONDS, AccessLog


def _read_all(fd: int, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        while chunk := os.read(fd, 1 << 16):
            into.append(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_records_are_written_within_their_flush_time() -> None:
    out_r, out_w = os.pipe()
    log = AccessLog(fd=out_w)
    written: list[bytes] = []
    reader = _read_all(out_r, written)

    async def two_records() -> float:
        log.record("192.0.2.1", b"GET /a HTTP/1.1", 200, 5, b"", b"curl")
        log.record("192.0.2.1", b"GET /b HTTP/1.1", 404, None)
        started = time.monotonic()
        while b"/b" not in b"".join(written):
            await asyncio.sleep(0.01)
        return time.monotonic() - started

    assert run_on_own_loop(two_records()) < FLUSH_SECONDS + 2
    log.close()
    os.close(out_w)
    reader.join(5)
    lines = b"".join(written).decode().splitlines()
    assert lines[0].startswith("192.0.2.1 - - [") and lines[0].endswith('"GET /a HTTP/1.1" 200 5 "-" "curl"')
    assert lines[1].endswith('"GET /b HTTP/1.1" 404 - "-" "-"')


def test_a_stdout_that_does_not_keep_up_never_holds_the_front_and_drops_are_counted() -> None:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    log = AccessLog(fd=out_w, errors=err_w, max_pending=256 * 1024)
    total = 20_000  # about 1.6 MB: far past the pipe's 64 KiB and the 256 KiB that may wait

    async def flood() -> float:
        started = time.monotonic()
        for n in range(total):
            log.record("192.0.2.1", f"GET /{n} HTTP/1.1".encode(), 200, 2)
        log.flush()
        return time.monotonic() - started

    assert run_on_own_loop(flood()) < 5, "nobody reads stdout, yet recording went on"
    written: list[bytes] = []
    errors: list[bytes] = []
    readers = [_read_all(out_r, written), _read_all(err_r, errors)]
    log.close(timeout=10)
    os.close(out_w)
    os.close(err_w)
    for reader in readers:
        reader.join(5)
    kept = b"".join(written).count(b"\n")
    said = b"".join(errors).decode()
    dropped = sum(int(count) for count in re.findall(r"(\d+) access records dropped", said))
    assert 0 < kept < total and kept + dropped == total, said


def test_a_stdout_that_cannot_be_written_is_said_once() -> None:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    os.close(out_r)  # a closed pipe: every write fails
    log = AccessLog(fd=out_w, errors=err_w)

    async def records() -> None:
        for n in range(3):
            log.record("192.0.2.1", f"GET /{n} HTTP/1.1".encode(), 200, 2)
            log.flush()
            await asyncio.sleep(0.05)

    run_on_own_loop(records())
    log.close()
    os.close(err_w)
    said = os.read(err_r, 1 << 16).decode()
    assert said.count("the access log cannot be written") == 1 and "GET /" not in said
