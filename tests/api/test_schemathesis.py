"""schemathesis with every check (conformance of statuses, bodies, headers and media types,
negative data rejected, positive data accepted, resources that exist after they are made, auth
respected), its examples, fuzzing and stateful phases, against a real server and worker: zero failures.
Bounded here (a few examples per operation); `make contract` runs it longer. The event streams are left
out: they stream until their client leaves, and a fuzzer reads whole bodies (tests/api/test_events.py)."""

from __future__ import annotations

from bench.contract import run_schemathesis


def test_every_check_passes_against_a_running_service(live_api, make_key, worker) -> None:
    key = make_key()["Authorization"].removeprefix("Bearer ")
    # the coverage phase's boundary values of every kind's params are `make contract`'s, and the hostile
    # inputs tests/api/test_fuzz.py's: here the document's examples, fuzzing and the stateful phase
    done = run_schemathesis(live_api.url, key, max_examples=5, phases="examples,fuzzing,stateful")
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    assert "no issues found" in report or " passed" in report, report[-3000:]
    assert "Stateful" in report and "API Links" in report, "the stateful phase ran, following links"
