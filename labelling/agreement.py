"""How far reviewers agree: percent agreement and Cohen's κ, per pair of reviewers.

κ corrects agreement for what two reviewers would reach by chance given how often
each uses each verdict. When both use a single verdict for every row, chance
agreement is 1 and κ is undefined: it is reported as None, not as 0 or 1.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from labelling.verdicts import RowState


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's κ over ``(a, b)`` verdict pairs; None when undefined.

    Example:
        >>> cohen_kappa([("correct", "correct"), ("incorrect", "incorrect")])
        1.0
        >>> round(cohen_kappa([("c", "c"), ("c", "i"), ("i", "i"), ("i", "i")]), 3)
        0.5
        >>> cohen_kappa([("c", "c"), ("c", "c")]) is None
        True
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    expected = sum(left[k] * right[k] for k in left.keys() | right.keys()) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class PairAgreement:
    first: str
    second: str
    rows: int  # rows both judged
    agreed: int
    kappa: float | None

    @property
    def percent(self) -> float | None:
        return 100.0 * self.agreed / self.rows if self.rows else None


def agreement(states: list[RowState]) -> list[PairAgreement]:
    """One entry per pair of reviewers who judged at least one row in common."""
    by_reviewer: dict[str, dict[int, str]] = {}
    for state in states:
        for verdict in state.verdicts:
            name = verdict.reviewer.get_username()
            by_reviewer.setdefault(name, {})[state.row.pk] = verdict.verdict
    result = []
    for first, second in combinations(sorted(by_reviewer), 2):
        common = sorted(by_reviewer[first].keys() & by_reviewer[second].keys())
        pairs = [(by_reviewer[first][row], by_reviewer[second][row]) for row in common]
        if pairs:
            agreed = sum(a == b for a, b in pairs)
            result.append(PairAgreement(first, second, len(pairs), agreed, cohen_kappa(pairs)))
    return result
