"""tests/order.py names modules that exist: a renamed one would silently lose its early start."""

from pathlib import Path

from tests.order import LONGEST_FIRST

ROOT = Path(__file__).resolve().parent.parent


def test_the_longest_modules_named_first_exist_once_each() -> None:
    assert [path for path in LONGEST_FIRST if not (ROOT / path).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
