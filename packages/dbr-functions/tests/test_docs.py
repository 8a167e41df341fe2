"""dbr.functions._docs: shared docstring passages filled in at the placeholder's indentation."""

import re

import pytest

import dbr.functions as F
from dbr.functions._docs import fill, fill_text


def test_fill_text_indents_each_line_of_the_passage_as_the_placeholder():
    doc = "Summary.\n\n    Args:\n        x: the input.\n        {more}\n\n    Done.\n    "
    passages = {"more": "y: another\n    input.\n\nz: a third."}
    assert fill_text(doc, passages) == (
        "Summary.\n\n    Args:\n        x: the input.\n        y: another\n"
        "            input.\n\n        z: a third.\n\n    Done.\n    "
    )


def test_fill_text_leaves_braces_that_are_not_a_whole_placeholder_line():
    doc = "    y_{r c} = x_{c}\n    {not a name}\n    a {name} inside"
    assert fill_text(doc, {"name": "never"}) == doc


def test_fill_text_raises_on_a_placeholder_without_a_passage():
    with pytest.raises(KeyError, match="missing"):
        fill_text("    {missing}", {})


def test_fill_sets_the_docstring_and_returns_the_function():
    def f():
        """Head.

        {body}
        """

    assert fill(body="Body\n    more.")(f) is f
    assert f.__doc__ == "Head.\n\n        Body\n            more.\n        "


def test_fill_leaves_a_stripped_docstring_none():
    def f():
        pass

    assert fill(body="x")(f).__doc__ is None


def test_no_public_docstring_keeps_a_placeholder_line():
    placeholder = re.compile(r"^\s*\{[A-Za-z_]\w*\}\s*$", re.MULTILINE)
    unfilled = [
        name
        for name in F.__all__
        if placeholder.search(getattr(getattr(F, name), "__doc__", None) or "")
    ]
    assert unfilled == []
