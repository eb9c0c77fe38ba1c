"""Paired comparisons: the same games played two ways, their difference game by game."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def paired(change: Sequence[float] | np.ndarray) -> str:
    """A paired change as a row's columns: its mean, the half width of the mean's 95% interval (normal
    approximation; nan with one pair) and the shares of pairs below and above zero."""
    diffs = np.asarray(change, dtype=float)
    half = 1.96 * diffs.std(ddof=1) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
    return f"{diffs.mean():+7.3f} {half:6.3f} {np.mean(diffs < 0):7.1%} {np.mean(diffs > 0):6.1%}"
