"""bench/soak.py's one-minute form against the installed product (`zolve up` in a data directory of its
own): mixed traffic from 20 keys while pool processes are killed, Redis is restarted and a message is
lost, and then nothing lost, nothing stuck, no stream missing or repeating an event, no webhook missing,
no 5xx. The faults are scheduled at fractions of the run, so the short run makes every one of them;
`bench/soak.py --minutes 20` is the long run, which also judges memory growth (a minute, with a pool
process killed every six seconds, has no steady state to judge it by). Timing is reported by the soak,
not asserted here."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import installed

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^\| (?P<name>[^|]+?) \| (?P<value>[^|]*?) \|$", re.MULTILINE)
#: the traffic's minute, the stack's start, the idle figures, the drain and the checks, with room
TIMEOUT = 15 * 60


def _soak(minutes: float, logs: Path) -> tuple[int, str]:
    """Run the soak to its end; on a timeout stop it with SIGTERM (it then stops its stack) and fail."""
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    command = [sys.executable, str(ROOT / "bench" / "soak.py"), "--minutes", str(minutes)]
    command += ["--zolve", str(installed.product().zolve), "--logs", str(logs)]
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        output, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
        try:
            output, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        pytest.fail(f"the soak ran over {TIMEOUT} s:\n{output[-5000:]}")
    return process.returncode, output


@pytest.mark.timeout(TIMEOUT + 180)  # past _soak's own limit, so that it stops the soak's stack itself
def test_a_one_minute_soak_loses_nothing(tmp_path: Path) -> None:
    code, output = _soak(1, tmp_path / "logs")
    print(output)  # the soak's table: `pytest -rP` shows it
    rows = {match["name"]: match["value"] for match in ROW.finditer(output)}
    assert code == 0, output[-8000:]
    assert rows["jobs lost"] == "0", output[-8000:]
    assert rows["jobs stuck"] == "0", output[-8000:]
    assert rows["events missed / repeated"] == "0 / 0", output[-8000:]
    assert rows["webhooks missing"] == "0", output[-8000:]
    assert rows["5xx"] == "0", output[-8000:]
    assert "invariants held" in output
