"""core.forks: what a process holds is let go of in a child forked from it, before the child's own code
runs, and only there."""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.queues
import weakref

from core import forks


class Holder:
    def __init__(self) -> None:
        self.parents = True
        forks.reset_in_child(self, Holder._forget_parent)

    def _forget_parent(self) -> None:
        self.parents = False


HELD = Holder()


def _report(result: multiprocessing.queues.SimpleQueue) -> None:
    result.put(HELD.parents)


def test_a_forked_child_lets_go_of_what_its_parent_held_and_the_parent_keeps_it() -> None:
    context = multiprocessing.get_context("fork")
    result = context.SimpleQueue()
    child = context.Process(target=_report, args=(result,))
    child.start()
    child.join(10)
    assert child.exitcode == 0 and result.get() is False
    assert HELD.parents is True


def test_a_holder_that_is_gone_is_not_kept_alive_by_its_reset() -> None:
    holder = Holder()
    gone = weakref.ref(holder)
    del holder
    gc.collect()
    assert gone() is None
