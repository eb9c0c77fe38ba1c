"""What belongs to one process. zolve's servers fork (Celery's prefork pool, granian's worker processes,
a solver's pool, all through os.fork): a forked child must not use its parent's connections, threads or
locks, which the fork copied in whatever state they were in (a lock held by a parent's thread stays held
for ever in the child). Whatever holds one says here how to let go of it, and the child does so right
after the fork, before any of its own code runs (os.register_at_fork): the one mechanism for it."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

Owner = TypeVar("Owner")

#: owner -> what lets go of its parent's resources in a child; weak, so that a holder can be collected
_RESETS: weakref.WeakKeyDictionary[Any, Callable[[Any], None]] = weakref.WeakKeyDictionary()


def reset_in_child(owner: Owner, reset: Callable[[Owner], None]) -> None:
    """Have every child forked from now on call `reset(owner)`, while `owner` lives. Pass an unbound
    method (`Class._forget_parent`): a bound one would keep `owner` alive."""
    _RESETS[owner] = reset


def _after_fork_in_child() -> None:
    for owner, reset in list(_RESETS.items()):
        reset(owner)


os.register_at_fork(after_in_child=_after_fork_in_child)
