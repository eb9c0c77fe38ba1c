"""Every test here ends by cancelling the jobs it left unfinished on the shared worker (tests/cleanup.py)."""

from tests.cleanup import cancel_leftover_jobs, keys_before_this_module  # noqa: F401 - autouse fixtures
