"""Memory a burst of requests freed, given back to the system (the API processes).

A flood of short-lived requests (thousands of bodies that never come, slow exports) allocates a great many
small objects at once. Once they are freed, the interpreter's own allocator keeps each 1 MiB arena that a
single surviving object still lives in, and the C library's malloc keeps freed pages inside its heaps:
the process stays at the flood's high-water mark. So the API processes allocate objects with the C
library's malloc (`PYTHONMALLOC=malloc`, which must be set before the interpreter starts: zolve.servers
starts `zolve api` again under it) and ask it at an interval to give back the pages it holds free
(glibc's `malloc_trim`). Elsewhere (another C library) there is no such call and nothing is trimmed.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from core.alarms import Alarm, AlarmClock

#: what `PYTHONMALLOC` the API processes run under
API_ALLOCATOR = "malloc"

_CLOCK = AlarmClock("zolve-heap-trim")


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_TRIM = _malloc_trim()


def can_trim() -> bool:
    return _TRIM is not None


def trim() -> bool:
    """Give the C library's free pages back to the system; False where it has no way to."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


def keep_trimmed(every: float) -> Alarm | None:
    """`trim()` every `every` seconds from now on (0: never)."""
    if every <= 0 or _TRIM is None:
        return None
    return _CLOCK.every(every, _trim_now)


def _trim_now() -> None:
    trim()
