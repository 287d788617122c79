"""A model's answer, parsed as the write path reads it: what it declared, key by key.

A capture keeps a model's raw answer; ``declaration_of`` turns it into the
JSON-ready declaration the capture file stores beside it, and shadow replays.
"""

from __future__ import annotations

from compiler import parse_declaration


def declaration_of(content: str) -> dict:
    """A model's answer parsed as the write path reads it.

    Example:
        >>> d = declaration_of('ok <contextgc-state>{"assert":{"seat":"12A"}}</contextgc-state>')
        >>> d["blocks"], d["malformed"], d["assert"], d["revoke"]
        (1, 0, {'seat': '12A'}, [])
    """
    _, d = parse_declaration(content)
    return {
        "blocks": d.blocks,
        "malformed": d.malformed,
        "assert": dict(d.asserts),
        "pin": dict(d.pins),
        "unsure": dict(d.unsure),
        "revoke": list(d.revokes),
        "problems": list(d.problems),
    }


def declared_keys(declaration: dict) -> list[str]:
    """Every key a declaration names: its assert, pin and unsure entries, then its revokes."""
    return [
        *declaration["assert"],
        *declaration["pin"],
        *declaration["unsure"],
        *declaration["revoke"],
    ]


def declared_values(declaration: dict) -> list[tuple[str, str]]:
    """Every (key, value) a declaration states (revokes state no value)."""
    return [(k, v) for op in ("assert", "pin", "unsure") for k, v in declaration[op].items()]
