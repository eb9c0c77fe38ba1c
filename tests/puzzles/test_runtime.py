import threading
import time

import pytest
import z3

from puzzles.runtime import Cancelled, Run, TimeLimitExceeded, checkpoint


def hard_problem(ctx: z3.Context) -> z3.Solver:
    """Pigeonhole 11 into 10: tiny to state, long for a SAT solver to refute."""
    solver = z3.Solver(ctx=ctx)
    holes, pigeons = 10, 11
    x = [[z3.Bool(f"p{i}h{j}", ctx) for j in range(holes)] for i in range(pigeons)]
    for i in range(pigeons):
        solver.add(z3.Or(x[i]))
    for j in range(holes):
        for a in range(pigeons):
            for b in range(a + 1, pigeons):
                solver.add(z3.Not(z3.And(x[a][j], x[b][j])))
    return solver


def test_deadline_stops_a_long_check() -> None:
    started = time.monotonic()
    with Run(1.0) as run, pytest.raises(TimeLimitExceeded):
        run.check(hard_problem(run.context()))
    assert time.monotonic() - started < 3


def test_stop_interrupts_contexts_created_later_too() -> None:
    with Run(30) as run:
        run.stop()
        with pytest.raises(Cancelled):
            run.check(hard_problem(run.context()))


def test_progress_reaches_the_callback() -> None:
    seen = []
    with Run(5, on_progress=seen.append) as run:
        run.progress(done=1, total=2)
    assert seen == [{"done": 1, "total": 2}]


def test_an_interrupt_outside_a_check_is_the_runs_stop_not_an_error() -> None:
    with pytest.raises(Cancelled), Run(60) as run:
        ctx = run.context()
        run.stop()
        # what Z3 raises when the interrupt lands while it builds or simplifies
        raise z3.Z3Exception("canceled")
    with pytest.raises(z3.Z3Exception), Run(60) as run:  # not stopped: a real error stays an error
        raise z3.Z3Exception("canceled")
    assert ctx is not None


def test_a_context_the_run_made_stays_interruptible_after_an_adoption_ends() -> None:
    with Run(30) as run:
        ctx = run.context()
        with run.adopt(ctx):
            pass
        threading.Timer(0.3, run.stop).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            run.check(hard_problem(ctx))
    assert time.monotonic() - started < 3


def test_an_interrupt_left_on_a_kept_context_does_not_fail_the_next_run() -> None:
    """A stop that lands after a run's last check leaves Z3's interrupt pending on a context the process
    keeps: the next run that adopts it pushes, asserts and checks as usual."""
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    solver.add(z3.Int("x", ctx) > 0)
    with Run(30) as earlier, earlier.adopt(ctx):
        assert solver.check() == z3.sat
        earlier.stop()  # after its check: Z3 keeps the interrupt
    with Run(30) as run, run.adopt(ctx), run.interruptible():
        solver.push()
        solver.add(z3.Int("x", ctx) < 5)
        assert solver.check() == z3.sat
        solver.pop()


def test_a_checkpoint_stops_only_the_run_it_is_inside() -> None:
    checkpoint()  # outside any run: nothing to stop
    with Run() as outer:
        outer.stop()
        with Run() as inner:
            checkpoint()  # the inner run goes on
            inner.stop()
            with pytest.raises(Cancelled):
                checkpoint()
        with pytest.raises(Cancelled):
            checkpoint()
    checkpoint()
