"""The two statistics every figure uses: a nearest-rank percentile and Wilson's interval.

``wilson`` is the one implementation of the interval; ``wilson95`` is the same
interval as the reports store it (a two-item list rounded to three places, empty
for n = 0).
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile.

    Example:
        >>> percentile([4.0, 1.0, 3.0, 2.0], 0.5), percentile([4.0, 1.0, 3.0, 2.0], 0.95)
        (2.0, 4.0)
        >>> percentile([7.0], 0.0)
        7.0
    """
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for ``successes`` out of ``n``, clipped to [0, 1].

    Example:
        >>> low, high = wilson(36, 36)
        >>> round(low, 3), high
        (0.904, 1.0)
        >>> [round(x, 3) for x in wilson(117, 130)]
        [0.836, 0.941]
        >>> wilson(0, 0) is None
        True
    """
    if n == 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson95(correct: int, judged: int) -> list[float]:
    """The 95% Wilson score interval for ``correct`` of ``judged``, rounded to 3 places.

    Example:
        >>> wilson95(20, 20)
        [0.839, 1.0]
        >>> wilson95(9, 10), wilson95(0, 7)
        ([0.596, 0.982], [0.0, 0.354])
        >>> wilson95(0, 0)
        []
    """
    interval = wilson(correct, judged)
    return [round(interval[0], 3), round(interval[1], 3)] if interval else []
