"""The `zolve` command line, below its entry point (zolve.cli): shared helpers and the in-process command
groups of puzzle kinds (each kind names its group in its `cli` hook)."""
