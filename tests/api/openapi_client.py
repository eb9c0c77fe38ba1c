"""openapi-python-client, a test-only tool: installed once per version into an environment of its own
(cached across sessions, like the product's dependencies: tests/installed.py), so that its own
dependencies never mix with what the product pins. The client it generates needs only httpx, attrs and
python-dateutil, which the test environment has."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

#: the generator, pinned: a new version may name things differently
GENERATOR = "openapi-python-client==0.29.1"
#: the generator's defaults but for its formatting hooks (it knows no vendor media type: the document offers
#: every file as application/octet-stream too, which it reads as bytes); the package's name is the one it
#: derives from the document's title, as a user's would be
CONFIG = "post_hooks: []\n"


def _generator() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "zolve-tests"
    venv = cache / ("openapi-python-client-" + GENERATOR.partition("==")[2])
    cache.mkdir(parents=True, exist_ok=True)
    with open(f"{venv}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not (venv / "complete").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", GENERATOR]
            subprocess.run(pip, check=True)
            (venv / "complete").touch()
    return venv / "bin" / "openapi-python-client"


def generate_client(document_url: str, into: Path) -> Path:
    """Generate the client of the document at `document_url` as a project (setup.py and its package) in
    `into`; returns the package's folder, named as the generator derives it from the document's title.
    Any warning of the generator (a response it would leave out, a schema it cannot read) fails."""
    config = into / "config.yml"
    config.write_text(CONFIG)
    project = into / "project"
    command = [str(_generator()), "generate", "--url", document_url, "--meta", "setup"]
    command += ["--config", str(config), "--output-path", str(project)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "warning" not in said.lower(), f"the generator warned:\n{said}"
    (package,) = [folder for folder in project.iterdir() if (folder / "__init__.py").exists()]
    return package
