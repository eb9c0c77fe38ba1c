"""zolve: board-game puzzles solved with Z3, as a distributed job service."""

from core.version import VERSION as __version__

__all__ = ["__version__"]
