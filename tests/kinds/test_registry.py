"""Kinds come through the `zolve.kinds` entry-point group: zolve's own, and a distribution of someone
else's that adds an entry to it, found as pip would have installed it (a dist-info on the path)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from kinds.registry import GROUP, KINDS, declared

ROOT = Path(__file__).resolve().parents[2]
OWN = {"dice", "leaving_earth", "mastermind", "planetx", "taiji"}


def _kinds_in_a_fresh_process(path: Path | None = None, prelude: str = "") -> list[str]:
    program = prelude + "import json, kinds; print(json.dumps(sorted(kinds.KINDS)))"
    found = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(path or ""), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return json.loads(found.stdout.splitlines()[-1])


def test_every_kind_is_registered_through_the_group() -> None:
    assert {name for name, _ in declared()} >= OWN
    assert {"dice", "planetx.enumerate", "mastermind.play", "leaving_earth.plan", "taiji.solve"} <= set(KINDS)


def test_a_distribution_of_someone_elses_adds_a_kind_with_an_entry_point(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "acme_kinds-1.0.dist-info").mkdir(parents=True)
    (site / "acme_kinds-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-kinds\n")
    (site / "acme_kinds-1.0.dist-info" / "entry_points.txt").write_text(
        f"[{GROUP}]\necho = acme_kinds:KINDS\n"
    )
    (site / "acme_kinds.py").write_text(
        textwrap.dedent(
            """
            from marshmallow import Schema, fields
            from kinds import Kind

            class EchoParams(Schema):
                text = fields.String(required=True)

            class EchoResult(Schema):
                text = fields.String()

            def solve(params, run):
                return {"text": params["text"]}

            KINDS = [Kind(name="acme.echo", summary="says it back", params_schema=EchoParams,
                          result_schema=EchoResult, solver="acme_kinds:solve")]
            """
        )
    )
    found = _kinds_in_a_fresh_process(site)
    assert "acme.echo" in found and "planetx.enumerate" in found


def test_a_checkout_run_uninstalled_reads_its_own_entries_from_pyproject() -> None:
    """As on a machine without a package index: the code on PYTHONPATH, no zolve distribution."""
    hide = textwrap.dedent(
        """
        import importlib.metadata as metadata
        real_distribution, real_entry_points = metadata.distribution, metadata.entry_points
        def distribution(name):
            if name == "zolve":
                raise metadata.PackageNotFoundError(name)
            return real_distribution(name)
        def entry_points(**selection):
            return [] if selection.get("group") == "zolve.kinds" else real_entry_points(**selection)
        metadata.distribution, metadata.entry_points = distribution, entry_points
        """
    )
    installed = _kinds_in_a_fresh_process()  # the same environment, the metadata there
    assert _kinds_in_a_fresh_process(prelude=hide) == installed and "planetx.enumerate" in installed
