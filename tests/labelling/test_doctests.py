"""The labelling modules' docstring examples run (pytest collects doctests only under
``tests``, ``compiler``, ``playground`` and the Django-free ``labelling/bench``)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "labelling.agreement",
    "labelling.compiling",
    "labelling.importing",
    "labelling.models.choices",
    "labelling.precision",
    "labelling.worksheets",
]


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
