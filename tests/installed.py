"""The product as people install it: the checkout's wheel, in a virtual environment outside the checkout.

Every test that starts `zolve` (up, worker, api, the command line) runs this environment's console script
from a working directory outside the checkout, so a module or file missing from the wheel fails the tests
that need it, as it would fail a user. The wheel is built once per test session, from a copy of the tree
(as an image build sees it: nothing is written into the checkout). The pinned dependencies
(requirements.lock) live in an environment cached across sessions and keyed by the lock file; the
session's own environment holds only the wheel and reaches them through a .pth file, so a session costs a
wheel build and a copy, not a dependency install; the processes of one session (pytest-xdist's workers)
share one build.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: what a build of the tree does not need (the rest is copied, as a container build's context would be)
_NOT_BUILT = shutil.ignore_patterns(
    ".git", ".venv", "zolve-data", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".*_cache"
)
#: the pinned dependencies, as `make` and the image install them
LOCKS = ("requirements.lock", "requirements-before-3.11.3.lock")
#: the test-only kinds that ZOLVE_PLUGINS=tests.plugins loads into the product's processes
_PLUGIN_FILES = ("__init__.py", "plugins.py", "sharded_plugin.py")


@dataclass(frozen=True)
class Product:
    venv: Path
    wheel: Path
    #: the client library's wheel (client/), which the service's depends on
    client_wheel: Path
    #: an empty directory outside the checkout: the working directory of the product's processes
    workdir: Path
    #: a directory holding only the test-only kinds (a `tests` package), put on the processes' PYTHONPATH
    plugins: Path

    @property
    def zolve(self) -> Path:
        return self.venv / "bin" / "zolve"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def command(self, *args: str) -> list[str]:
        """`zolve ARGS` as an installed user runs it."""
        return [str(self.zolve), *args]

    def env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """`env` (default: this process' environment) with the test-only kinds importable."""
        return {**(os.environ if env is None else env), "PYTHONPATH": str(self.plugins)}


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "zolve-tests"


def _dependencies() -> Path:
    """The environment of the pinned dependencies, made once per lock file and Python (under a file lock:
    several test sessions may start at once); returns its site-packages."""
    lock = b"".join((ROOT / name).read_bytes() for name in LOCKS)
    key = hashlib.sha256(lock + sys.version.encode()).hexdigest()[:16]
    venv = _cache_dir() / f"deps-{key}"
    _cache_dir().mkdir(parents=True, exist_ok=True)
    with open(_cache_dir() / f"deps-{key}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not (venv / "complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            _run(sys.executable, "-m", "venv", "--without-pip", str(venv))
            requirements = [arg for name in LOCKS for arg in ("-r", str(ROOT / name))]
            _pip(venv, "install", "--quiet", "--require-hashes", *requirements)
            (venv / "complete").touch()
    return _site_packages(venv)


def _build_wheels(into: Path) -> tuple[Path, Path]:
    """The service's wheel and its client library's (client/), as the image builds them."""
    source = into / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_BUILT)
    pip_wheel = (sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(into))
    _run(*pip_wheel, str(source / "client"), str(source))
    shutil.rmtree(source)
    return next(into.glob("zolve-*.whl")), next(into.glob("zolve_client-*.whl"))


#: a directory made for the test session (tests/conftest.py) where its processes (pytest-xdist's
#: workers) share one build of the product; without it, each process builds its own
SHARED_HOME = "ZOLVE_TEST_PRODUCT_HOME"


@functools.cache
def product() -> Product:
    """The product built and installed once for this test session (or process); each process gets a
    working directory of its own."""
    shared = os.environ.get(SHARED_HOME)
    if shared:
        home = Path(shared)
    else:
        home = Path(tempfile.mkdtemp(prefix="zolve-installed-"))
        atexit.register(shutil.rmtree, home, ignore_errors=True)
    build = home / "build"
    with open(home / "build.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not (home / "complete").exists():
            shutil.rmtree(build, ignore_errors=True)  # what a process that failed to build left
            build.mkdir()
            _install(build)
            (home / "complete").touch()
    return Product(
        venv=build / "venv",
        wheel=next(build.glob("zolve-*.whl")),
        client_wheel=next(build.glob("zolve_client-*.whl")),
        workdir=Path(tempfile.mkdtemp(prefix="work-", dir=home)),
        plugins=build / "plugins",
    )


def _install(home: Path) -> None:
    """The wheels built into `home`, installed in `home`/venv, and the test-only kinds in `home`/plugins."""
    deps = _dependencies()
    wheel, client_wheel = _build_wheels(home)
    venv = home / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    (_site_packages(venv) / "zolve-test-dependencies.pth").write_text(f"{deps}\n")
    _pip(venv, "install", "--quiet", "--no-deps", str(wheel), str(client_wheel))
    plugins = home / "plugins" / "tests"
    plugins.mkdir(parents=True)
    for name in _PLUGIN_FILES:
        shutil.copy(ROOT / "tests" / name, plugins / name)


def _site_packages(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


def _pip(venv: Path, *args: str) -> None:
    """This interpreter's pip, installing into `venv` (which has none of its own)."""
    _run(sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), *args)


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
