import json
import os
import subprocess
import sys
import textwrap

import pytest

from core import heap
from tests.support import wait_until

#: a flood's worth of small objects, one in LIVE of them still alive after it: every page of the heap keeps
#: a few live objects until trimmed
FLOOD = textwrap.dedent(
    """
    import json, psutil, sys
    from core import heap

    def rss():
        return psutil.Process().memory_info().rss

    before = rss()
    flood = [bytearray(200) for _ in range(1_000_000)]
    kept = flood[::{live}]
    del flood
    freed = rss()
    trimmed = heap.trim()
    print(json.dumps({{"before": before, "freed": freed, "after": rss(), "trimmed": trimmed}}))
    """
)
LIVE = 64
FLOOD_BYTES = 1_000_000 * 200


def _flood(allocator: str) -> dict[str, int]:
    env = {**os.environ, "PYTHONMALLOC": allocator}
    out = subprocess.run(
        [sys.executable, "-c", FLOOD.format(live=LIVE)], env=env, capture_output=True, text=True, check=True
    )
    figures: dict[str, int] = json.loads(out.stdout)
    return figures


@pytest.mark.skipif(not heap.can_trim(), reason="not glibc: no malloc_trim")
def test_under_the_api_allocator_a_trim_gives_back_what_a_flood_freed() -> None:
    """200 MB of small objects, one in 64 kept: under PYTHONMALLOC=malloc the pages they leave are held
    until trimmed, then given back (within half the flood's size of the start)."""
    figures = _flood(heap.API_ALLOCATOR)
    assert figures["trimmed"]
    assert figures["freed"] - figures["before"] > FLOOD_BYTES / 2, figures  # held: what the trim is for
    assert figures["after"] - figures["before"] < FLOOD_BYTES / 2, figures


@pytest.mark.skipif(not heap.can_trim(), reason="not glibc: no malloc_trim")
def test_under_the_interpreters_allocator_a_trim_gives_back_little() -> None:
    """Why the API's processes run under PYTHONMALLOC=malloc: the interpreter's own allocator keeps every
    arena one of the kept objects lives in, whatever the C library is asked."""
    figures = _flood("pymalloc")
    assert figures["after"] - figures["before"] > FLOOD_BYTES / 2, figures


def test_keep_trimmed_is_off_at_zero() -> None:
    assert heap.keep_trimmed(0) is None


def test_keep_trimmed_trims_at_its_interval_until_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap, "_TRIM", calls.append)
    alarm = heap.keep_trimmed(0.01)
    assert alarm is not None
    wait_until(lambda: len(calls) >= 3, 10, what="three trims")
    alarm.cancel()
    assert set(calls) == {0}
