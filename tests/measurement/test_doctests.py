"""The measurement modules' docstring examples run (pytest collects doctests only under
``tests``, ``compiler``, ``playground`` and the Django-free ``labelling/bench``)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "labelling.measurement.captures_report",
    "labelling.measurement.charts",
    "labelling.measurement.corpus_report",
    "labelling.measurement.measure",
    "labelling.bench.records",
    "labelling.measurement.records_render",
    "labelling.measurement.records_report",
    "labelling.bench.records_values",
]


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
