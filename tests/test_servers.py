"""The API server's gunicorn settings that are not about requests' shapes (those are in test_front)."""

from __future__ import annotations

import subprocess
import sys

from core.config import Settings
from zolve.servers import PLACES_PER_CPU, freeze_loaded_heap, front_capacity, gunicorn_options


def test_each_api_worker_freezes_its_loaded_heap_once_the_app_is_loaded() -> None:
    options = gunicorn_options(Settings(), host="127.0.0.1", port=8000, workers=2, threads=8)
    assert options["post_worker_init"] is freeze_loaded_heap


def test_freezing_keeps_the_objects_alive_then_out_of_the_collectors_passes() -> None:
    """In a process of its own: a frozen heap stays frozen for the rest of the process."""
    script = (
        "import gc, json; from zolve.servers import freeze_loaded_heap; before = gc.get_freeze_count();"
        " freeze_loaded_heap(); print(json.dumps([before, gc.get_freeze_count()]))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    before, after = map(int, out.strip("[]\n").split(","))
    assert before == 0
    assert after > 10_000  # everything imported so far: the settings, click, the standard library


def test_the_front_lets_four_requests_per_usable_cpu_be_computed_at_once_within_the_threads() -> None:
    assert front_capacity(workers=2, threads=8, cpus=2) == 2 * PLACES_PER_CPU
    assert front_capacity(workers=1, threads=8, cpus=2) == PLACES_PER_CPU  # one process: one CPU at a time
    assert front_capacity(workers=4, threads=8, cpus=16) == 4 * PLACES_PER_CPU
    assert front_capacity(workers=2, threads=1, cpus=8) == 2  # never more than the threads
    assert front_capacity(workers=2, threads=8) >= 1  # this machine's CPUs
