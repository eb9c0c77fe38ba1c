"""A small HTTP client for the zolve API (used by the CLI)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import click
import requests

FINAL_STATES = {"succeeded", "failed", "cancelled"}


class Client:
    def __init__(self, url: str, key: str, timeout: float = 60.0):
        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {key}"
        self.timeout = timeout

    def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = self.session.request(method, self.url + path, timeout=self.timeout, **kwargs)
        except requests.ConnectionError as exc:
            raise click.ClickException(f"cannot reach {self.url}: is the service running?") from exc
        try:
            body = response.json()
        except ValueError:
            body = {"message": response.text[:200]}
        if response.status_code >= 400:
            detail = f"\n{body['errors']}" if body.get("errors") else ""
            raise click.ClickException(f"{response.status_code}: {body.get('message')}{detail}")
        return body

    def submit(self, body: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._request("POST", "/jobs", json=body, headers=headers)

    def get(self, job_id: str, wait: float = 0) -> dict[str, Any]:
        return self._request("GET", f"/jobs/{job_id}", params={"wait": wait} if wait else None)

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._request("POST", f"/jobs/{job_id}/cancel")

    def iter_jobs(
        self, states: tuple[str, ...] = (), kind: str | None = None, limit: int = 20, all_pages: bool = False
    ) -> Iterator[dict[str, Any]]:
        params: dict[str, Any] = {"state": list(states), "limit": limit}
        if kind:
            params["kind"] = kind
        while True:
            page = self._request("GET", "/jobs", params=params)
            yield from page["items"]
            if not all_pages or not page.get("next_cursor"):
                return
            params["cursor"] = page["next_cursor"]

    def export(self, job_id: str, fmt: str, output: Any) -> int:
        """Stream a job's boards into `output`; returns how many were written."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        try:
            response = self.session.get(
                f"{self.url}/jobs/{job_id}/boards.{fmt}", stream=True, timeout=self.timeout
            )
        except requests.ConnectionError as exc:
            raise click.ClickException(f"cannot reach {self.url}: is the service running?") from exc
        if response.status_code >= 400:
            raise click.ClickException(f"{response.status_code}: {response.json().get('message')}")
        total = int(response.headers.get("X-Total-Count") or 0) or None
        # NDJSON (application/x-ndjson) comes without a charset, and then iter_lines(decode_unicode=True)
        # yields bytes; both exports are UTF-8
        response.encoding = "utf-8"
        written = 0
        columns = [BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("boards", total=total)
            for chunk in response.iter_lines(chunk_size=1 << 16, decode_unicode=True):
                output.write(chunk + "\n")
                if not (fmt == "csv" and chunk.startswith("code,")):
                    written += 1
                    if written % 5000 == 0:
                        bar.update(task, completed=written)
        output.flush()
        return written

    def wait(self, job_id: str, timeout: float | None = None) -> dict[str, Any]:
        """Long-poll until the job finishes, showing its state and progress on stderr."""
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        deadline = None if timeout is None else time.monotonic() + timeout
        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()]
        with Progress(*columns, transient=True) as bar:
            task = bar.add_task(job_id, total=None)
            while True:
                job = self.get(job_id, wait=5)
                progress = job.get("progress") or {}
                done, total = progress.get("done"), progress.get("total")
                summary = " ".join(f"{k}={v}" for k, v in progress.items() if k not in ("done", "total"))
                bar.update(task, description=f"{job['state']} {summary}".strip(), completed=done, total=total)
                if job["state"] in FINAL_STATES:
                    return job
                if deadline is not None and time.monotonic() > deadline:
                    raise click.ClickException(f"job {job_id} still {job['state']} after {timeout:g} s")
