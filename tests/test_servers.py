"""The API server's settings that are not about requests' shapes (those are in test_edge)."""

from __future__ import annotations

import subprocess
import sys

from core.config import Settings
from zolve.servers import PLACES_PER_CPU, edge_capacity, edge_config


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


def test_each_process_computes_its_share_of_four_requests_per_usable_cpu_within_its_threads() -> None:
    assert edge_capacity(workers=2, threads=8, cpus=2) == PLACES_PER_CPU  # 8 in all, 4 each
    assert edge_capacity(workers=1, threads=8, cpus=2) == PLACES_PER_CPU  # one process: one CPU at a time
    assert edge_capacity(workers=4, threads=8, cpus=16) == PLACES_PER_CPU
    assert edge_capacity(workers=4, threads=8, cpus=2) == 2  # 8 places for 2 CPUs, shared by 4
    assert edge_capacity(workers=2, threads=1, cpus=8) == 1  # never more than the threads
    assert edge_capacity(workers=2, threads=8) >= 1  # this machine's CPUs


def test_the_edge_takes_its_limits_from_the_settings_and_streams_get_threads_of_their_own() -> None:
    settings = Settings(
        request_body_seconds=7, max_body_bytes=123, max_requests_per_address=9, trusted_proxies=1
    )
    config = edge_config(settings, workers=2, threads=8)
    assert (config.body_seconds, config.max_body_bytes, config.max_requests_per_address) == (7, 123, 9)
    assert config.trusted_proxies == 1 and config.threads == 8


def test_the_api_processes_run_under_the_allocator_that_trims(live_api) -> None:
    """`zolve api` started without PYTHONMALLOC starts itself again under core.heap.API_ALLOCATOR (the same
    process: exec), and granian's workers, forked from it, run under it too."""
    import psutil

    from core.heap import API_ALLOCATOR

    assert "PYTHONMALLOC" not in live_api.env
    server = psutil.Process(live_api.process.pid)
    for process in [server, *server.children(recursive=True)]:
        assert process.environ().get("PYTHONMALLOC") == API_ALLOCATOR, process.cmdline()
