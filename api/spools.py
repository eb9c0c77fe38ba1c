"""Exports read once and shared while they are being sent (per API process).

An export's rows are read whole, in one snapshot, into a spool (memory up to a bound, then an unnamed
temporary file), and the database is let go before the first byte is sent (api.rows). A succeeded job's
rows never change, so the same export asked for again while one is still being sent (another client
downloading the same enumeration; a client that reconnects) reads the same spool: one read and one
rendering of the rows, however many readers, each at its own offset. A spool goes once its last reader
closes.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import IO

from core.waiting import SPOOL_CHUNK


class Spool:
    """An export's bytes, in memory or in a temporary file, read by its readers at their own offsets
    (tempfile.SpooledTemporaryFile keeps one position for one reader, and which of the two it holds is
    private to it: readers sharing a spool need reads at an offset, `pread`)."""

    def __init__(self, memory: bytes | None, file: IO[bytes] | None, size: int) -> None:
        self.memory, self.file, self.size = memory, file, size
        self.readers = 0

    @classmethod
    def write(cls, parts: Iterable[bytes], in_memory: int) -> Spool:
        """The parts written in order: kept in memory while they come to at most `in_memory` bytes."""
        held: list[bytes] = []
        size, file = 0, None
        try:
            for part in parts:
                size += len(part)
                if file is None and size <= in_memory:
                    held.append(part)
                    continue
                if file is None:
                    file = tempfile.TemporaryFile()  # noqa: SIM115 - its descriptor outlives this call
                    for earlier in held:
                        file.write(earlier)
                    held = []
                file.write(part)
        except BaseException:
            if file is not None:
                file.close()
            raise
        if file is None:
            return cls(b"".join(held), None, size)
        file.flush()
        return cls(None, file, size)

    def read(self, offset: int) -> bytes:
        if self.memory is not None:
            return self.memory[offset : offset + SPOOL_CHUNK]
        assert self.file is not None
        return os.pread(self.file.fileno(), SPOOL_CHUNK, offset)

    def discard(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        self.memory = None


class Reader:
    """One answer's reader of a spool (core.waiting.Spooled reads it): `read()` the next chunk, `close()`
    once (the spool goes with its last reader)."""

    def __init__(self, spools: Spools, key: Hashable, spool: Spool) -> None:
        self.spools, self.key, self.spool = spools, key, spool
        self.offset = 0
        self.closed = False

    @property
    def size(self) -> int:
        return self.spool.size

    def read(self, _: int = -1) -> bytes:
        chunk = self.spool.read(self.offset)
        self.offset += len(chunk)
        return chunk

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.spools.release(self.key, self.spool)


class Spools:
    """The process's spools being read, by what they hold (rows, filters, format)."""

    def __init__(self, in_memory: int) -> None:
        self.in_memory = in_memory
        self._spools: dict[Hashable, Spool] = {}
        self._lock = threading.Lock()

    def reader(self, key: Hashable) -> Reader | None:
        """A reader of the spool of `key`, if one is being read now."""
        with self._lock:
            spool = self._spools.get(key)
            if spool is None:
                return None
            spool.readers += 1
            return Reader(self, key, spool)

    def fill(self, key: Hashable, parts: Callable[[], Iterable[bytes]]) -> Reader:
        """A reader of a spool written now from `parts()` (or of one that another request finished
        writing meanwhile, the same bytes)."""
        written = Spool.write(parts(), self.in_memory)
        with self._lock:
            spool = self._spools.get(key)
            if spool is None:
                spool = self._spools[key] = written
            spool.readers += 1
        if spool is not written:
            written.discard()
        return Reader(self, key, spool)

    def release(self, key: Hashable, spool: Spool) -> None:
        with self._lock:
            spool.readers -= 1
            last = spool.readers == 0
            if last and self._spools.get(key) is spool:
                del self._spools[key]
        if last:
            spool.discard()

    def __len__(self) -> int:
        with self._lock:
            return len(self._spools)


def encoded(parts: Iterable[bytes] | Iterable[str]) -> Iterator[bytes]:
    """Text parts as UTF-8, bytes as they are."""
    for part in parts:
        yield part.encode() if isinstance(part, str) else part
