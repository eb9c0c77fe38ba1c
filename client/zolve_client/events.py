"""Server-sent events: a job's (or all your jobs') events as the API streams them."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    """One event of a stream: its id (resume after it with Last-Event-ID), name and JSON data."""

    id: int
    event: str
    data: dict[str, Any]


def parse_events(lines: Iterable[str]) -> Iterator[Event]:
    """Server-sent events from a stream's lines (comments and `retry:` lines skipped)."""
    return (event for event in frames(lines) if event is not None)


def frames(lines: Iterable[str]) -> Iterator[Event | None]:
    """A stream's events, and None for each comment (the server's keepalives): a sign of life that lets
    a waiting reader look at its clock."""
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if "data" in fields:
                yield Event(
                    int(fields.get("id") or 0), fields.get("event", "message"), json.loads(fields["data"])
                )
            fields = {}
        elif line.startswith(":"):
            yield None
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value


def text_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines (without their ending: LF or CRLF) of UTF-8 text arriving in chunks, each as soon as it
    is complete; a last line without an ending too."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    for chunk in chunks:
        pending += decoder.decode(chunk)
        *complete, pending = pending.split("\n")
        for line in complete:
            yield line.removesuffix("\r")
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending.removesuffix("\r")
