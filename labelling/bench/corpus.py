"""The benchmark's corpus: transcripts read from files, counted the same way for both
libraries, and grouped into the independent units they come from.

A ``Transcript`` is one transcript's messages as dicts with its characters, its tokens
(``ESTIMATOR``, the same for both libraries), the tokens outside its system prompt and
outside its prompt (system and first user turn), and the gold its record holds if any.
``cluster_of`` names the independent unit a transcript belongs to; ``first_turn_kept``
says whether a compile kept the first system or user turn verbatim. No Django: the
benchmark runs without the site's settings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler import CharEstimator, formats_many, message_to_dict, message_tokens
from labelling.bench.gold import gold_values

ESTIMATOR = CharEstimator()
ESTIMATOR_NOTE = (
    "chars/4 for both libraries: max(1, len // 4) per message over content "
    "+ tool-call names and arguments (compiler.telemetry.message_tokens)"
)


@dataclass(frozen=True)
class Transcript:
    ident: str
    messages: list[dict]
    chars: int
    tokens: int
    tokens_outside_system: int
    gold: dict[str, frozenset[str]] | None
    # 0 in a row stored before this figure existed
    tokens_outside_prompt: int = 0


class Chars:
    """A counter for ``message_tokens`` that counts characters."""

    name = "chars"

    def count(self, text: str) -> int:
        return len(text)


def read_corpus(path: Path, limit: int | None = None) -> list[Transcript]:
    """Every transcript in a file, or in each file of a directory (sorted)."""
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    found = []
    for file in files:
        for ident, parsed in formats_many(file.read_text(encoding="utf-8")):
            name = ident if not path.is_dir() else f"{file.name}:{ident}"
            messages = [message_to_dict(m) for m in parsed.messages]
            found.append(transcript_of(name, messages, parsed.record))
            if limit is not None and len(found) >= limit:
                return found
    return found


def transcript_of(ident: str, messages: list[dict], record: Any = None) -> Transcript:
    """A transcript of message dicts, counted, with the gold its record holds if any.

    Example:
        >>> t = transcript_of("t", [{"role": "system", "content": "x" * 9},
        ...                         {"role": "user", "content": "hello"}])
        >>> t.chars, t.tokens, t.tokens_outside_system, t.tokens_outside_prompt, t.gold
        (14, 3, 1, 0, None)
    """
    return Transcript(
        ident=ident,
        messages=messages,
        chars=sum(message_tokens(Chars(), m) for m in messages),
        tokens=sum(message_tokens(ESTIMATOR, m) for m in messages),
        tokens_outside_system=tokens_outside_system(messages),
        tokens_outside_prompt=tokens_outside_prompt(messages),
        gold=gold_values(record),
    )


def tokens_outside_system(messages: list[dict]) -> int:
    """Estimated tokens of every message but the system ones."""
    return sum(message_tokens(ESTIMATOR, m) for m in messages if m.get("role") != "system")


def tokens_outside_prompt(messages: list[dict]) -> int:
    """Estimated tokens of every message but the system ones and the first user one: what
    is left once the standing instructions and the task statement are set aside, so two
    compilers compare on the conversation alone (whatever either made of those two).

    Example:
        >>> tokens_outside_prompt([{"role": "system", "content": "x" * 40},
        ...     {"role": "user", "content": "y" * 40}, {"role": "user", "content": "z" * 8}])
        2
    """
    rest = [m for m in messages if m.get("role") != "system"]
    first = next((i for i, m in enumerate(rest) if m.get("role") == "user"), None)
    return sum(message_tokens(ESTIMATOR, m) for i, m in enumerate(rest) if i != first)


def cluster_of(source: str, transcript_id: str, record: Any) -> str:
    """The independent unit a transcript belongs to.

    Replays are not independent evidence: the four trials of one tau-bench task,
    the nebius trajectories of one issue, the eight marshmallow-1867 demos.

    Example:
        >>> cluster_of("airline/few_shot.jsonl", "3", {"task_id": 7})
        'airline/few_shot.jsonl#task7'
        >>> cluster_of("coding/swe-agent/marshmallow-1867__demo3.traj", "0", None)
        'marshmallow-1867'
        >>> cluster_of("coding/nebius-sample.txt", "AnalogJ__lexicon-336#2", None)
        'coding/nebius-sample.txt#AnalogJ__lexicon-336'
    """
    if isinstance(record, dict) and "task_id" in record:
        return f"{source}#task{record['task_id']}"
    if "swe-agent/" in source:
        return re.sub(r"__.*$", "", Path(source).stem)
    return f"{source}#{transcript_id.split('#')[0]}"


def first_turn_kept(messages: list[dict], out: list[dict], role: str) -> bool | None:
    """Whether the first non-empty ``role`` turn survives verbatim in some output message.

    For ``system`` that is the agent's policy; for ``user`` usually the task statement.
    None when the transcript has no such turn.

    Example:
        >>> msgs = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]
        >>> header = {"role": "system", "content": "[STATE]\\n\\nBe kind."}
        >>> first_turn_kept(msgs, [header], "system")
        True
        >>> first_turn_kept(msgs, [{"role": "system", "content": "Be ... [TRUNCATED]"}], "system")
        False
        >>> first_turn_kept(msgs, [], "tool") is None
        True
    """
    for message in messages:
        text = message.get("content")
        if message.get("role") == role and isinstance(text, str) and text.strip():
            return any(text in (m.get("content") or "") for m in out)
    return None
