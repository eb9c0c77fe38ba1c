"""bench/paired.py: a paired change's columns."""

import math

from bench.paired import paired


def test_mean_interval_and_shares() -> None:
    mean, half, shorter, longer = paired([-2, 0, 1, -3]).split()
    assert float(mean) == -1.0
    # sample standard deviation of (-2, 0, 1, -3) is sqrt(10/3)
    assert float(half) == round(1.96 * math.sqrt(10 / 3) / 2, 3)
    assert (shorter, longer) == ("50.0%", "25.0%")


def test_one_pair_has_no_interval() -> None:
    assert paired([1.5]).split()[:2] == ["+1.500", "nan"]
