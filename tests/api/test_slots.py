"""api.slots: places per key, and turns in order for work that holds a database connection."""

from __future__ import annotations

from api.slots import Slots, Turns
from core.waiting import Wake


def test_slots_cap_a_key_and_the_total() -> None:
    slots = Slots(total=3, per_key=2)
    assert slots.take("a") and slots.take("a") and not slots.take("a")
    assert slots.take("b") and not slots.take("c")
    slots.give_back("a")
    assert slots.take("c")


def test_turns_come_in_the_order_asked_and_wake_the_next_when_one_ends() -> None:
    turns = Turns(1)
    first, second, third = Wake(), Wake(), Wake()
    assert turns.take(first)
    assert not turns.take(second) and not turns.take(third)
    assert not turns.take(third), "asking again keeps its place in the line, behind the second"
    turns.give_back()
    assert second.is_set() and not third.is_set()
    assert not turns.take(third), "not its turn yet"
    assert turns.take(second)
    turns.leave(third)  # its request ended while waiting: nobody left to wake
    turns.give_back()
    assert not third.is_set() and turns.take(Wake())


def test_a_waiter_that_leaves_first_passes_its_turn_on() -> None:
    turns = Turns(1)
    holder, gone, next_one = Wake(), Wake(), Wake()
    assert turns.take(holder)
    assert not turns.take(gone) and not turns.take(next_one)
    turns.give_back()
    assert gone.is_set()
    turns.leave(gone)
    assert next_one.is_set() and turns.take(next_one)
