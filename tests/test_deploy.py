import shutil
import subprocess

import pytest

from tests.support import ROOT


def test_docker_compose_file_is_valid() -> None:
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is not installed: `make test` installs Debian's docker-compose package")
    done = subprocess.run(["docker-compose", "config", "-q"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_compose_runs_every_role() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    for service in ("postgres:", "redis:", "migrate:", "api:", "worker:"):
        assert f"\n  {service}" in compose
