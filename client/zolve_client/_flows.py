"""The parts of the clients' many-request calls that send nothing, shared by Client and AsyncClient: what
wait() shows of a job as its events come, how an export's bytes become rows, how paging goes on."""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable, Mapping
from typing import IO, Any

from zolve_client.errors import WaitTimeout
from zolve_client.events import Event
from zolve_client.models import Job
from zolve_client.progress import ExportProgress, ProgressReporter
from zolve_client.states import FINAL_STATES

#: the state a job's event puts it in
_STATE_OF_EVENT = {
    "running": "running",
    "cancel_requested": "cancelling",
    "requeued": "queued",
    "retried": "queued",
}
#: how far along its life each unfinished state is
_STAGE = {"queued": 0, "running": 1, "cancelling": 2}

OnUpdate = Callable[[Job[Any, Any]], None]


def _moves_on(shown: Job[Any, Any], event: Event, fetched: Job[Any, Any]) -> bool:
    """Whether a state event is news: a requeue or retry newer than the run the job was fetched in, or
    a state not behind the one shown."""
    state = _STATE_OF_EVENT[event.event]
    if event.event in ("requeued", "retried"):
        began = fetched.get("started_at")
        return began is not None and str(event.data.get("at", "")) > str(began)
    return _STAGE[state] >= _STAGE.get(shown["state"], 0)


class Updates:
    """Where wait() hands each newer view of the job: a ProgressReporter on stderr when asked
    (`every` seconds apart), and the caller's `on_update`. A context manager: the reporter's line ends."""

    def __init__(self, job_id: str, every: float | None, on_update: OnUpdate | None) -> None:
        self.reporter = ProgressReporter(job_id, every=every) if every is not None else None
        self.on_update = on_update

    def __enter__(self) -> Updates:
        if self.reporter is not None:
            self.reporter.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.reporter is not None:
            self.reporter.__exit__(*exc)

    def __call__(self, job: Job[Any, Any]) -> None:
        if self.reporter is not None:
            self.reporter.update(job)
        if self.on_update is not None:
            self.on_update(job)


class Watch:
    """A job as wait() shows it while its stream replays its history and goes on: a state is shown only
    when it is not behind the one shown (a replayed `running` after `cancelling` showed the job going back),
    except a requeue or retry that happens now."""

    def __init__(self, fetched: Job[Any, Any], update: Updates) -> None:
        self.fetched, self.shown, self.update = fetched, fetched, update

    def see(self, event: Event) -> bool:
        """Show what the event changes; True when it is the job's last (the caller fetches the job)."""
        if event.event in FINAL_STATES:
            return True
        if event.event == "progress":
            self.shown = {**self.shown, "progress": event.data.get("detail") or {}}
        elif event.event in _STATE_OF_EVENT and _moves_on(self.shown, event, self.fetched):
            self.shown = {**self.shown, "state": _STATE_OF_EVENT[event.event]}  # type: ignore[typeddict-item]
        else:
            return False
        self.update(self.shown)
        return False


def check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise WaitTimeout("not done within the time given")


def deadline_after(seconds: float | None) -> float | None:
    """The monotonic time `seconds` from now (None: no deadline)."""
    return None if seconds is None else time.monotonic() + seconds


def poll_wait(job: Job[Any, Any], poll: float, deadline: float | None, timeout: float | None) -> float:
    """How long the next long-poll waits; WaitTimeout once the deadline has passed."""
    if deadline is None:
        return poll
    left = deadline - time.monotonic()
    if left < 0:
        raise WaitTimeout(f"job {job['id']} still {job['state']} after {timeout:g} s")
    return min(poll, left)


def is_final(job: Job[Any, Any]) -> bool:
    return job["state"] in FINAL_STATES


class RowsWriter:
    """An export's text (UTF-8 bytes as they come) written to `output`, its rows counted and shown
    (`show_progress`); a last row without its line ending gets one."""

    def __init__(self, output: IO[str], path: str, fmt: str, headers: Mapping[str, str], show: bool) -> None:
        noun = path.rpartition("/")[2].rpartition(".")[0] or "rows"  # /jobs/{id}/boards.csv: boards
        total = int(headers.get("X-Total-Count") or 0) or None
        self.output, self.fmt = output, fmt
        self.progress = ExportProgress(noun, total, enabled=show)
        self.decoder = codecs.getincrementaldecoder("utf-8")()  # both exports are UTF-8
        self.lines, self.start, self.end = 0, "", "\n"

    def __enter__(self) -> RowsWriter:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def write(self, chunk: bytes, final: bool = False) -> None:
        text = self.decoder.decode(chunk, final=final)  # the last raises for a cut-off character
        if not text:
            return
        self.output.write(text)
        self.lines += text.count("\n")
        self.start, self.end = self.start or text, text[-1]
        self.progress.update(self.lines)

    def rows(self) -> int:
        """Once the text has all come: the rows written (a CSV's header line not counted)."""
        self.write(b"", final=True)
        if self.end != "\n":
            self.output.write("\n")
            self.lines += 1
        self.output.flush()
        header = self.fmt == "csv" and self.start.startswith("code,")
        return self.lines - header


def next_page(params: Mapping[str, Any], page: Mapping[str, Any]) -> dict[str, Any] | None:
    """The parameters of a keyset-paged listing's next page; None after the last. Every iter_* method
    follows the pages to the end: take fewer with itertools.islice, or stop iterating."""
    cursor = page.get("next_cursor")  # 0 is a cursor too (a position)
    return {**params, "cursor": cursor} if cursor is not None else None
