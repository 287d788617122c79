"""Worked examples: real transcripts with the request that compiles them.

Each file in ``example_data/`` holds a title, where the transcript came from,
and a request body for ``POST /api/compile`` that produces state under the
schema it names. The console offers them one click away; ``GET /api/example``
returns the read-path and the write-path one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("example_data")
ORDER = ("read_path", "write_path", "airline")


@dataclass(frozen=True)
class Example:
    slug: str
    title: str
    source: str
    request: dict

    @property
    def transcript(self) -> str:
        """The transcript as a person would paste it: text as is, messages as JSON."""
        if "transcript" in self.request:
            return self.request["transcript"]
        return json.dumps(self.request["messages"], indent=1, ensure_ascii=False)

    @property
    def schema(self) -> str | None:
        return self.request.get("entity_schema")


@cache
def examples() -> dict[str, Example]:
    """Every example by slug, in the order the console lists them.

    Example:
        >>> list(examples())
        ['read_path', 'write_path', 'airline']
        >>> examples()["write_path"].request["teach_protocol"]
        True
    """
    found = {}
    for slug in ORDER:
        data = json.loads((DATA / f"{slug}.json").read_text(encoding="utf-8"))
        found[slug] = Example(slug, data["title"], data["source"], data["request"])
    return found
