"""What ships is what the checkout holds: the built wheel carries every file of every product package, and
the installed product imports and answers from outside the checkout (pictures/ was once left out of the
wheel, and every installed copy died on import while the suite, run from the checkout, stayed green)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from fnmatch import fnmatch
from pathlib import Path

import pytest

from tests.installed import _NOT_BUILT as NOT_BUILT
from tests.installed import ROOT, product
from tests.support import run_installed

pytestmark = pytest.mark.slow  # builds and installs the wheel (once per session)

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


#: the checkout's top-level packages that are not the product's
DEVELOPMENT = {"tests", "bench", "scripts", "docs", "deploy"}


def _top_level_packages() -> set[str]:
    return {path.parent.name for path in ROOT.glob("*/__init__.py")}


def _product_packages() -> set[str]:
    """The checkout's top-level packages that pyproject.toml ships."""
    included = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    return {name for name in _top_level_packages() if any(fnmatch(name, pattern) for pattern in included)}


def _source_files(package: str) -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_packages_kept_out_are_the_development_ones() -> None:
    packages = _product_packages()
    layers = {"api", "core", "kinds", "pictures", "puzzles", "schemas", "services", "store", "workers"}
    assert layers < packages
    assert {"zolve", "migrations"} < packages
    assert not packages & DEVELOPMENT
    # a new top-level package is shipped, or named here as a development one
    assert _top_level_packages() - packages <= DEVELOPMENT


def test_building_the_wheel_warns_of_no_package_left_ambiguous(tmp_path: Path) -> None:
    """Folders of templates and static files beside the code are packages to setuptools too: without
    them in its packages, each build printed a "Package would be ignored" warning (issue 50, item 8)."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=NOT_BUILT)  # as the wheel is built: nothing written into the checkout
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v"]  # setuptools as a build gets it
    built = subprocess.run([*command, "-w", str(tmp_path), str(tree)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    assert "would be ignored" not in built.stdout + built.stderr


def test_the_wheel_holds_every_file_of_every_product_package() -> None:
    shipped = {name for name in zipfile.ZipFile(product().wheel).namelist() if ".dist-info/" not in name}
    expected = set().union(*(_source_files(package) for package in _product_packages()))
    assert sorted(expected - shipped) == [], "files the wheel leaves out"
    assert sorted(shipped - expected) == [], "files the wheel has that the checkout does not"


def test_every_module_of_the_installed_product_imports_outside_the_checkout() -> None:
    """Each module, imported in the installed environment from a directory outside the checkout, finds
    what it imports (a module missing from the wheel, or a dependency missing from the lock, fails here)."""
    check = """
import importlib, pkgutil, sys
failed = []
for top in sys.argv[1:]:
    package = importlib.import_module(top)
    assert package.__file__.startswith(sys.prefix), (top, package.__file__)
    for module in pkgutil.walk_packages(package.__path__, top + "."):
        # scripts that run inside a program, not modules: the command line's, Alembic's (`zolve migrate`)
        if module.name.endswith(".__main__") or module.name == "migrations.env":
            continue
        try:
            importlib.import_module(module.name)
        except Exception as error:
            failed.append(f"{module.name}: {error!r}")
print("\\n".join(failed))
"""
    installed = product()
    done = subprocess.run(
        [str(installed.python), "-c", check, *sorted(_product_packages())],
        capture_output=True,
        text=True,
        cwd=installed.workdir,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == ""


def test_the_installed_command_line_answers_and_reports_the_version() -> None:
    version = run_installed(["--version"])
    assert version.returncode == 0 and version.stdout.split()[-1] == PYPROJECT["project"]["version"]
    solved = run_installed(["solve", "dice", "--params", '{"dice": 3, "faces": 4}'])
    assert solved.returncode == 0, solved.stderr
    assert '"optimal": true' in solved.stdout
    assert not Path(product().workdir).is_relative_to(ROOT)


# -- the client library (client/: zolve-client) -----------------------------------------------------------
CLIENT = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())


def test_the_service_depends_on_its_own_release_of_the_client_library() -> None:
    """One version for both distributions, and the service's wheel requires exactly that client rather
    than carrying a copy of it."""
    version = PYPROJECT["project"]["version"]
    assert CLIENT["project"]["version"] == version
    assert f"zolve-client=={version}" in PYPROJECT["project"]["dependencies"]
    shipped = zipfile.ZipFile(product().wheel).namelist()
    assert not [name for name in shipped if name.startswith("zolve_client/")]
    assert "zolve_client" not in _top_level_packages(), "the client lives in client/, not the server's tree"


def test_the_client_wheel_holds_its_package_and_needs_two_distributions() -> None:
    names = zipfile.ZipFile(product().client_wheel).namelist()
    shipped = {name for name in names if ".dist-info/" not in name}
    package = ROOT / "client" / "zolve_client"
    expected = {f"zolve_client/{path.name}" for path in package.glob("*.py")}
    assert shipped == expected | {"zolve_client/py.typed"}, "its modules and the PEP 561 marker"
    assert [name.split(">")[0] for name in CLIENT["project"]["dependencies"]] == ["httpx", "tenacity"]


def test_a_locally_built_distribution_is_taken_out_of_a_compiled_lock() -> None:
    from scripts.unlock_local import without

    lock = (
        "tenacity==9.1.2 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
        "zolve-client==0.1.0 \\\n    --hash=sha256:cc \\\n    --hash=sha256:dd\n"
        "zolve-clientele==1.0 \\\n    --hash=sha256:ee\n"
        "urllib3==2.5.0 \\\n    --hash=sha256:ff\n"
    )
    assert without(lock, "zolve-client") == (
        "tenacity==9.1.2 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
        "zolve-clientele==1.0 \\\n    --hash=sha256:ee\n"
        "urllib3==2.5.0 \\\n    --hash=sha256:ff\n"
    )
