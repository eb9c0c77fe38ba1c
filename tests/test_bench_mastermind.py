"""bench/mastermind.py --secrets spaced plays exactly the seed's test set."""

from bench.mastermind import spaced_secrets


def _digits(value: int, n: int) -> list[int]:
    """value as a base-6 digit string of length n, most significant digit first (the seed's format)."""
    text = ""
    for _ in range(n):
        value, digit = divmod(value, 6)
        text = str(digit) + text
    return [int(char) for char in text]


def test_spaced_secrets_are_the_seeds_evenly_spaced_codes() -> None:
    codes = spaced_secrets(16)
    assert len(codes) == 1000
    assert codes == [_digits(i * 6**16 // 1000, 16) for i in range(1000)]
    assert codes[0] == [0] * 16
    assert codes[200] == [1] * 16 and codes[500] == [3] + [0] * 15  # 6¹⁶/5 = 11…1₆, 6¹⁶/2 = 30…0₆
    assert len({tuple(code) for code in codes}) == 1000


def test_every_mth_of_the_spaced_secrets() -> None:
    every20 = spaced_secrets(16, every=20)
    assert len(every20) == 50
    assert every20 == spaced_secrets(16)[::20]
    assert every20[1] == _digits(20 * 6**16 // 1000, 16) == [int(c) for c in "0041530415304153"]
