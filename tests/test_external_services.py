"""The external path: `zolve up` with DATABASE_URL and REDIS_URL pointing at real servers (the machine's
PostgreSQL on 127.0.0.1:5432 and Redis on :6379), so one test run covers both embedded and external."""

import os
import signal
import socket
import stat
import subprocess
from pathlib import Path

import pytest
import requests

from tests.support import create_database, drop_database, free_port, installed_popen, wait_until

SYSTEM_POSTGRES = os.environ.get(
    "ZOLVE_TEST_EXTERNAL_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
SYSTEM_REDIS = os.environ.get("ZOLVE_TEST_EXTERNAL_REDIS_URL", "redis://127.0.0.1:6379/14")


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def external_database() -> str:
    if not (_listening(5432) and _listening(6379)):
        pytest.skip("no PostgreSQL on 127.0.0.1:5432 or Redis on :6379 to test the external path against")
    url = create_database(SYSTEM_POSTGRES, "zolve_external")
    yield url
    drop_database(url)


def test_zolve_up_uses_external_servers_when_urls_are_set(external_database: str, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DATABASE_URL": external_database,
        "REDIS_URL": SYSTEM_REDIS,
        "ZOLVE_DATA_DIR": str(tmp_path / "data"),
    }
    service = installed_popen(
        ["up", "--port", str(port), "--workers", "1", "--api-workers", "1"],
        env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        key = service.stdout.readline().strip().split("=", 1)[1]
        headers = {"Authorization": f"Bearer {key}"}

        def healthy() -> bool:
            try:
                return requests.get(f"{base}/health", timeout=1).ok
            except requests.RequestException:
                return False

        wait_until(healthy, 60, 0.3, "the API")
        job = requests.post(
            f"{base}/jobs",
            json={"kind": "dice", "params": {"dice": 3, "faces": 6}},
            headers=headers,
            timeout=10,
        ).json()

        def finished() -> dict | None:
            current = requests.get(f"{base}/jobs/{job['id']}?wait=5", headers=headers, timeout=10).json()
            return current if current["state"] == "succeeded" else None

        final = wait_until(finished, 60, 0, "the job")
        assert final["result"]["wins"] == 21
        data = tmp_path / "data"
        assert not (data / "postgres").exists() and not (data / "redis").exists(), "started embedded servers"
        assert stat.S_IMODE(data.stat().st_mode) == 0o700, "it holds the signing key and the access log"
    finally:
        service.send_signal(signal.SIGINT)
        service.communicate(timeout=60)  # and its pipes closed
        assert service.returncode == 0
