"""zolve: board-game puzzles solved with Z3, as a distributed job service."""

__version__ = "0.1.0"
