"""The version of zolve that runs, as installed (pyproject.toml is the one place it is written)."""

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("zolve")
except PackageNotFoundError:  # imported from a checkout that was never installed
    VERSION = "0+unknown"
