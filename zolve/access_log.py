"""The API's access log, written by zolve.edge for every request it answers or refuses, in Apache's
combined format (gunicorn's default, which wrote it before granian): the client's address, the time, the
request line, the status, the body's size, the referrer and the user agent. No other header is in it, so
no credential is: not the `Authorization` key, not the dashboard's session cookie (issue 32).

Records are gathered on the API process's event loop and handed, every FLUSH_SECONDS or FLUSH_BYTES, to a
thread that writes them to stdout: a stdout that is slow or full (a pipe nobody reads) never holds a request.
Past MAX_PENDING_BYTES not yet written, records are dropped and stderr counts them. A stdout that cannot be
written at all (a closed pipe) is said once on stderr, without any record; the API goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import re
import threading
import time

FLUSH_SECONDS = 0.2
FLUSH_BYTES = 64 * 1024
MAX_PENDING_BYTES = 8 * 1024 * 1024
#: bytes written escaped (\xNN, as nginx does), so that a client's header cannot forge a record or a
#: terminal escape: controls, non-ASCII, the quote and the backslash
_UNSAFE = re.compile(rb'[\x00-\x1f\x7f-\xff"\\]')


def _text(raw: bytes) -> str:
    if not raw:
        return "-"
    if _UNSAFE.search(raw):
        raw = _UNSAFE.sub(lambda match: b"\\x%02x" % match.group()[0], raw)
    return raw.decode("ascii")


class AccessLog:
    def __init__(self, fd: int = 1, errors: int = 2, max_pending: int = MAX_PENDING_BYTES) -> None:
        self.fd, self.errors, self.max_pending = fd, errors, max_pending
        self.lines: list[str] = []
        self.size = 0
        self.timer: asyncio.TimerHandle | None = None
        self.pending = 0  # bytes handed to the writer, not yet written
        self.dropped = 0  # records dropped since stderr last said so
        self.broken = False
        self.lock = threading.Lock()
        self.chunks: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.writer = threading.Thread(target=self._write_all, name="access-log", daemon=True)
        self.writer.start()
        self._second, self._stamp = -1, ""

    def record(
        self,
        client: str,
        request_line: bytes,
        status: int,
        size: int | None,
        referrer: bytes = b"",
        agent: bytes = b"",
    ) -> None:
        line = (
            f'{client} - - {self._now()} "{_text(request_line)}" {status} '
            f'{"-" if size is None else size} "{_text(referrer)}" "{_text(agent)}"\n'
        )
        self.lines.append(line)
        self.size += len(line)
        if self.size >= FLUSH_BYTES:
            self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if not self.lines:
            return
        data = "".join(self.lines).encode("ascii")
        count = len(self.lines)
        self.lines, self.size = [], 0
        with self.lock:
            if self.broken:
                return
            if self.pending + len(data) > self.max_pending:
                self.dropped += count
                return
            self.pending += len(data)
        self.chunks.put(data)

    def close(self, timeout: float = 2.0) -> None:
        """Write what is gathered, within `timeout`."""
        self.flush()
        self.chunks.put(None)
        self.writer.join(timeout)

    def _now(self) -> str:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._stamp = time.strftime("[%d/%b/%Y:%H:%M:%S %z]", time.localtime(now))
        return self._stamp

    def _write_all(self) -> None:
        while (data := self.chunks.get()) is not None:
            try:
                if not self.broken:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self.fd, view) :]
            except OSError as error:
                self.broken = True
                self._say(f"zolve: the access log cannot be written ({error}); its records are dropped")
            with self.lock:
                self.pending -= len(data)
                dropped, self.dropped = self.dropped, 0
            if dropped:
                self._say(f"zolve: {dropped} access records dropped: stdout did not keep up")

    def _say(self, message: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self.errors, (message + "\n").encode())
