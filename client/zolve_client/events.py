"""Server-sent events: a job's (or all your jobs') events as the API streams them."""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass

from zolve_client.models import EventData


@dataclass(frozen=True)
class Event:
    """One event of a stream: its id (resume after it with Last-Event-ID), name and JSON data."""

    id: int
    event: str
    data: EventData


def parse_events(lines: Iterable[str]) -> Iterator[Event]:
    """Server-sent events from a stream's lines (comments and `retry:` lines skipped)."""
    return (event for event in frames(lines) if event is not None)


def frames(lines: Iterable[str]) -> Iterator[Event | None]:
    """A stream's events, and None for each comment (the server's keepalives): a sign of life that lets
    a waiting reader look at its clock."""
    reader = FrameReader()
    for line in lines:
        yield from reader.feed(line)


def text_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines (without their ending: LF or CRLF) of UTF-8 text arriving in chunks, each as soon as it
    is complete; a last line without an ending too."""
    reader = LineReader()
    for chunk in chunks:
        yield from reader.feed(chunk)
    yield from reader.end()


async def aframes(chunks: AsyncIterable[bytes]) -> AsyncIterator[Event | None]:
    """frames(text_lines(chunks)) of chunks that arrive asynchronously."""
    lines, reader = LineReader(), FrameReader()
    async for chunk in chunks:
        for line in lines.feed(chunk):
            for frame in reader.feed(line):
                yield frame
    for line in lines.end():
        for frame in reader.feed(line):
            yield frame


class FrameReader:
    """Server-sent events, a line at a time: feed() gives the event a blank line completes, or None for a
    comment."""

    def __init__(self) -> None:
        self._fields: dict[str, str] = {}

    def feed(self, line: str) -> list[Event | None]:
        if line.startswith(":"):
            return [None]
        if line != "":
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            joined = name == "data" and name in self._fields
            self._fields[name] = self._fields[name] + "\n" + value if joined else value
            return []
        fields, self._fields = self._fields, {}
        if "data" not in fields:
            return []
        return [Event(int(fields.get("id") or 0), fields.get("event", "message"), json.loads(fields["data"]))]


class LineReader:
    """UTF-8 text arriving in chunks, as lines (without their ending: LF or CRLF) as soon as each is
    complete; end() gives a last line without an ending."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""

    def feed(self, chunk: bytes) -> list[str]:
        *complete, self._pending = (self._pending + self._decoder.decode(chunk)).split("\n")
        return [line.removesuffix("\r") for line in complete]

    def end(self) -> list[str]:
        last = (self._pending + self._decoder.decode(b"", final=True)).removesuffix("\r")
        self._pending = ""
        return [last] if last else []
