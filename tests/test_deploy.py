import re
import shutil
import subprocess
import tomllib

import pytest

from tests.support import ROOT


@pytest.mark.integration  # needs docker-compose, which only `make test` installs (scripts/test-tools.sh)
def test_docker_compose_file_is_valid() -> None:
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is not installed: `make test` installs Debian's docker-compose package")
    done = subprocess.run(["docker-compose", "config", "-q"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_compose_runs_every_role() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    for service in ("postgres:", "redis:", "migrate:", "api:", "worker:"):
        assert f"\n  {service}" in compose


def _packages() -> set[str]:
    """The top-level packages pyproject installs (`[tool.setuptools.packages.find] include`)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    return {pattern.rstrip("*").rstrip(".") for pattern in include}


def test_the_image_copies_every_package_pyproject_installs() -> None:
    """`pip install .` in the image installs only what was COPYed: a package left out is missing at run
    time (core/, kinds/ and services/ once were)."""
    copied = set(re.findall(r"^COPY (\w+) \./(\w+)/?$", (ROOT / "Dockerfile").read_text(), re.MULTILINE))
    packages = _packages()
    assert "api" in packages and "core" in packages  # the include list was read
    assert sorted(packages - {source for source, target in copied if source == target}) == []
