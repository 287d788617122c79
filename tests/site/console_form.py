"""What the console's form posts, for the tests that post it."""

from __future__ import annotations

HTMX = {"HTTP_HX_REQUEST": "true"}


def form_data(text: str, **fields) -> dict:
    """The console's form for ``text``: travel schema, compact mode, both policies
    flagging; ``fields`` change any of them or add others."""
    return {
        "transcript": text,
        "entity_schema": "travel",
        "mode": "compact",
        "declaration_policy": "flag",
        "value_policy": "flag",
        **fields,
    }
