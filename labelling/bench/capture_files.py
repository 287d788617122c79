"""Reading any capture file back, the transcripts it names, and whether it may be used.

Two formats are read. Format 2 is what ``labelling.bench.capture`` writes (documented
there). Format 1 (the seed library's captures: ``"version": 1``, ``endpoint``, ``model``,
``schema``, ``turns`` of ``transcript``, ``index``, ``role``, ``declared``, ``content``)
is read as well. Its transcript ids are ``<source>:<ordinal>``, the source being the
``# source:`` line at the top of the corpus file (``id_scheme`` ``"source:ordinal"``);
format 2's are ``compiler``'s (``"formats_many"``). ``corpus_transcripts`` finds a
corpus's transcripts under either id scheme, and ``transcript_digest`` says whether they
hold the messages the capture was made over.

``key_figures`` counts what a capture declared, in and off its schema; ``verify`` says
why it may not be used as a measurement of the write path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler import CompilerError, formats_many, load_schema, message_to_dict
from labelling.bench.declarations import declaration_of, declared_keys

FORMAT = 2
MIN_IN_SCHEMA = 0.5
FORMATS_MANY = "formats_many"
SOURCE_ORDINAL = "source:ordinal"


class CaptureError(Exception):
    """A capture file that cannot be read, or a corpus that cannot be captured."""


# -- the transcripts a capture names, under its id scheme ------------------------------


def corpus_transcripts(text: str, id_scheme: str = FORMATS_MANY) -> dict[str, tuple]:
    """Every transcript of a corpus file as ``id → messages`` (``compiler`` Messages).

    ``formats_many`` ids are the compiler's; ``source:ordinal`` ids are the seed
    library's, ``<# source: line>:<place>``, and a file without that line has none.

    Example:
        >>> text = "# source: demo\\n# a#0 (m)\\nuser: hi\\nassistant: yo\\n---\\n"
        >>> list(corpus_transcripts(text)), list(corpus_transcripts(text, SOURCE_ORDINAL))
        (['a#0'], ['demo:0'])
    """
    found = formats_many(text)
    if id_scheme == FORMATS_MANY:
        return {ident: parsed.messages for ident, parsed in found}
    if id_scheme == SOURCE_ORDINAL:
        first = text.lstrip("\ufeff").split("\n", 1)[0]
        if not first.lower().startswith("# source:"):
            return {}
        source = first.split(":", 1)[1].strip()
        return {f"{source}:{i}": parsed.messages for i, (_, parsed) in enumerate(found)}
    raise CaptureError(f"unknown id scheme {id_scheme!r}")


def transcript_digest(messages: Iterable) -> str:
    """A digest of a transcript's messages, so a capture knows the exact text it asked about."""
    dicts = [message_to_dict(m) for m in messages]
    return digest(dicts)


def digest(value: Any) -> str:
    """A short digest of a JSON-ready value, the same for the same value on every run."""
    data = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()[:16]


# -- reading any capture -----------------------------------------------------------------


def read_json(path: Path) -> dict:
    """The JSON object in ``path``; ``CaptureError`` if it is unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CaptureError(f"{path}: not a readable capture ({error})") from None
    if not isinstance(data, dict):
        raise CaptureError(f"{path}: not a capture (a JSON object is expected)")
    return data


@dataclass(frozen=True)
class Turn:
    transcript: str
    index: int
    content: str
    read_path: dict | None = None


@dataclass(frozen=True)
class Capture:
    """A capture of either format, as shadow, verify and the reports read it."""

    name: str
    format: int
    endpoints: tuple[str, ...]
    model: str
    schema: str | None
    id_scheme: str
    transcripts: dict[str, str | None]  # id → digest of its messages (None: not recorded)
    turns: tuple[Turn, ...]
    planned: int
    legacy_prompt: bool = False
    fingerprint: str = ""
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        return len(self.turns) >= self.planned


def load_capture(path: Path) -> Capture:
    """Read a capture file of format 2 or of the seed library's format 1."""
    data = read_json(path)
    try:
        if data.get("format") == FORMAT:
            return _format_2(path.name, data)
        if data.get("version") == 1 and isinstance(data.get("turns"), list):
            return _format_1(path.name, data)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        # a turn or transcript entry without the fields its format gives every one
        raise CaptureError(f"{path}: a damaged capture ({type(error).__name__}: {error})") from None
    raise CaptureError(f'{path}: unknown capture format (expected "format": {FORMAT})')


def _format_2(name: str, data: dict) -> Capture:
    corpus = data.get("corpus") or {}
    return Capture(
        name=name,
        format=FORMAT,
        endpoints=tuple(e for e in data.get("endpoints") or () if e),
        model=data.get("model") or "",
        schema=data.get("schema"),
        id_scheme=corpus.get("id_scheme", FORMATS_MANY),
        transcripts={t["id"]: t.get("digest") for t in corpus.get("transcripts") or ()},
        turns=tuple(
            Turn(t["transcript"], int(t["index"]), t.get("content") or "", t.get("read_path"))
            for t in data["turns"]
        ),
        planned=int(data.get("planned_turns") or 0),
        legacy_prompt=bool(data.get("legacy_prompt")),
        fingerprint=data.get("fingerprint") or "",
        raw=data,
    )


def _format_1(name: str, data: dict) -> Capture:
    turns = tuple(
        Turn(t["transcript"], int(t["index"]), t.get("content") or "") for t in data["turns"]
    )
    endpoint = data.get("endpoint")
    return Capture(
        name=name,
        format=1,
        endpoints=(endpoint,) if endpoint else (),
        model=data.get("model") or "",
        schema=data.get("schema"),
        id_scheme=SOURCE_ORDINAL,
        transcripts=dict.fromkeys(t.transcript for t in turns),
        turns=turns,
        planned=int(data.get("prompts_asked") or len(turns)),
        legacy_prompt=bool(data.get("legacy_prompt")),
        fingerprint=data.get("prompt_fingerprint") or "",
        raw=data,
    )


# -- what a capture declared, and whether it may be used ---------------------------------


def schema_of(capture: Capture):
    """The schema ``capture`` was made with; ``CaptureError`` if it cannot be loaded here."""
    try:
        return load_schema(capture.schema)
    except CompilerError as error:
        raise CaptureError(f"{capture.name}: its schema cannot be loaded ({error})") from None


def key_figures(capture: Capture) -> dict:
    """Blocks, malformed blocks and declared keys in and off the capture's schema.

    ``in_schema`` is None when the capture names no schema: the ratio is unknown then,
    never guessed.
    """
    slots = set(schema_of(capture).slot_names) if capture.schema else None
    figures = {"turns": len(capture.turns), "turns_with_block": 0, "blocks": 0, "malformed": 0}
    keys: list[str] = []
    for turn in capture.turns:
        d = declaration_of(turn.content)
        figures["turns_with_block"] += d["blocks"] > 0
        figures["blocks"] += d["blocks"]
        figures["malformed"] += d["malformed"]
        keys += declared_keys(d)
    figures["declared"] = len(keys)
    figures["in_schema"] = None if slots is None else sum(k in slots for k in keys)
    off = set() if slots is None else {k for k in keys if k not in slots}
    figures["off_schema_keys"] = sorted(off)
    return figures


def verify(capture: Capture) -> list[str]:
    """Why ``capture`` may not be used as a measurement of the write path; [] if it may."""
    problems = []
    if not capture.endpoints or not capture.model:
        problems.append(
            "it does not say which endpoint and model produced it: "
            "a capture that cannot be attributed is an anecdote"
        )
    if capture.legacy_prompt:
        problems.append("it was made with the legacy prompt, which taught the protocol twice")
    if not capture.complete:
        problems.append(f"it is incomplete: {len(capture.turns)} of {capture.planned} turns")
    figures = key_figures(capture)
    if figures["declared"] == 0:
        problems.append(f"it recorded no declarations ({figures['turns']} turns asked)")
    elif figures["in_schema"] is None:
        problems.append("it names no schema, so its in-schema share is unknown")
    elif figures["in_schema"] < MIN_IN_SCHEMA * figures["declared"]:
        share = figures["in_schema"] / figures["declared"]
        problems.append(
            f"its declared keys name a schema slot {figures['in_schema']} of "
            f"{figures['declared']} times ({share:.0%}), under {MIN_IN_SCHEMA:.0%}"
        )
    return problems
