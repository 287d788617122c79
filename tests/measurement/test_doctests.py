"""The measurement modules' docstring examples run (pytest collects doctests only under
``tests``, ``compiler``, ``playground`` and the Django-free ``labelling/bench``)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests.doctest_modules import modules_with_examples

# two modules of the Django-free bench that need the app's settings to import
MODULES = [
    *modules_with_examples(
        "labelling.measurement", leave_out=("labelling.measurement.migrations.",)
    ),
    "labelling.bench.records",
    "labelling.bench.records_values",
]


def test_the_walk_finds_the_modules_with_examples():
    assert "labelling.measurement.measure_render" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
