"""The report charts' labels: none overlaps another, none runs past the chart's edge."""

from __future__ import annotations

import re

from labelling.measurement.charts import WIDTH, reduction_bars, text_width, timeline


def label_ys(svg: str) -> dict[str, float]:
    return {
        text: float(y)
        for y, text in re.findall(r'<text x="44" y="([\d.]+)" text-anchor="end"[^>]*>([^<]+)<', svg)
    }


def value_label(svg: str) -> tuple[str, str | None]:
    """The x and the anchor of the one value label (11 px text) of a timeline."""
    found = re.search(
        r'<text x="([\d.]+)" y="[\d.]+" (text-anchor="end" )?[^>]*font-size="11"', svg
    )
    return found.groups()


def test_a_share_just_below_zero_is_labelled_a_line_below_zero():
    rows = [
        {"ident": "a", "raw_tokens": 100, "compiled_tokens": 40},
        {"ident": "b", "raw_tokens": 1000, "compiled_tokens": 1010},  # grew by 1%
    ]
    ys = label_ys(reduction_bars("Reduction", rows))
    assert ys["-1%"] - ys["0%"] >= 14


def test_a_value_set_late_is_labelled_left_of_its_dot_inside_the_chart():
    history = [
        {"slot": "cabin", "value": "business class upgrade", "turn": 58, "superseded_by": None}
    ]
    svg = timeline("t", history, 60)
    x, anchor = value_label(svg)
    assert anchor  # drawn leftwards from its dot
    assert float(x) <= WIDTH
    assert float(x) - text_width("business class upgrade", 11) >= 0


def test_a_value_set_early_is_labelled_right_of_its_dot():
    history = [{"slot": "cabin", "value": "economy", "turn": 1, "superseded_by": None}]
    svg = timeline("t", history, 60)
    x, anchor = value_label(svg)
    assert anchor is None
    assert float(x) + text_width("economy", 11) <= WIDTH
