"""Pure Z3 puzzle logic: one module per kind, each exposing `solve(params, run) -> dict`.

Nothing here imports Flask, Celery or SQL: a solve function sees only its validated params and a
`puzzles.runtime.Run`, which carries the time limit, cancellation and progress reporting.
"""
