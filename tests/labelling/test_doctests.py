"""The labelling modules' docstring examples run (pytest collects doctests only under
``tests``, ``compiler``, ``playground`` and the Django-free ``labelling/bench``)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests.doctest_modules import modules_with_examples

MODULES = modules_with_examples(
    "labelling",
    leave_out=("labelling.bench.", "labelling.measurement.", "labelling.migrations."),
)


def test_the_walk_finds_the_modules_with_examples():
    assert {"labelling.precision", "labelling.worksheets"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
