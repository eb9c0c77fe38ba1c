"""The security probes of issue 37 against the real stack. Each test ends by cancelling the jobs its keys
left unfinished on the shared worker (tests/cleanup.py)."""

from tests.cleanup import cancel_leftover_jobs, keys_before_this_module  # noqa: F401 - autouse fixtures
