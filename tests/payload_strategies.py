"""JSON payloads for property tests of compaction: scalars with the shapes that matter (a
safety term, an email, a line break, a long string, a lone surrogate, an escape), keys a
collection or a tool call may use, and records nested at any depth."""

from __future__ import annotations

from hypothesis import strategies as st

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["PEANUT allergy", "a@b.co", "do\nnot", "x" * 1600, "é\ud800", "a\\u0062"])
)
KEYS = st.sampled_from(["id", "name", "note", "rows", "legs", "arguments", "a.b", "k:1", "é"])


def records(max_rows: int):
    """A collection: 2 to ``max_rows`` flat records."""
    return st.lists(
        st.dictionaries(KEYS, SCALARS, min_size=1, max_size=4), min_size=2, max_size=max_rows
    )


def payload_values(max_rows: int):
    """Scalars, collections of up to ``max_rows`` records, and lists and objects of them."""
    return st.recursive(
        SCALARS | records(max_rows),
        lambda inner: st.lists(inner, max_size=25) | st.dictionaries(KEYS, inner, max_size=5),
        max_leaves=60,
    )


def payload_objects(max_rows: int):
    """Top-level objects of ``payload_values``."""
    return st.dictionaries(KEYS, payload_values(max_rows), min_size=1, max_size=6)
