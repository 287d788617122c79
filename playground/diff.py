"""The aligned diff: one row per original turn, the compiled form beside it.

Which compiled message came from which turn is read from the telemetry, not found by
matching text: a compact compile leaves out exactly the retired turns, in order, and may
put one message of its own first (the state header); a cache-friendly compile keeps
every turn and may add one message last (the register). So the turns not retired, in
order, are the compiled messages less that one added message.

Each row says what happened to its turn (``Change``): kept, compacted, a stale read or a
repeat pointer (both kinds of compaction the telemetry names by shape), retired, or
rewritten (the compiled text differs for another reason: a declaration block cut out, a
recall appended). Long text is cut to a preview; the template shows the rest in a
``<details>`` expander.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass

from compiler import Message, strip_compiled_one

# Text up to this long, and of at most SHORT_LINES lines, is shown whole (at most three
# lines of a phone's row); a longer turn costs the page one line until it is opened.
SHORT_CHARS = 120
SHORT_LINES = 3
PREVIEW_CHARS = 200  # the one line a longer text shows until it is opened


class Change(enum.StrEnum):
    KEPT = "kept"
    COMPACTED = "compacted"
    STALE = "stale"
    REPEAT = "repeat"
    RETIRED = "retired"
    REWRITTEN = "rewritten"
    ADDED = "added"


# compaction shapes that are not a summary of the payload but a pointer elsewhere
SHAPE_CHANGE = {"stale_read": Change.STALE, "repeated_value": Change.REPEAT}


@dataclass(frozen=True)
class Block:
    """A piece of text as shown: whole when short, else a preview and the whole."""

    text: str
    preview: str
    json: bool = False

    @property
    def long(self) -> bool:
        return self.preview != self.text


@dataclass(frozen=True)
class Side:
    """One message as shown on either side: role, name, text blocks, readable calls."""

    role: str
    name: str | None
    blocks: tuple[Block, ...]
    calls: tuple[Block, ...] = ()


@dataclass(frozen=True)
class Row:
    turn: int | None  # None: a message the compile added
    change: Change
    original: Side | None
    compiled: Side | None
    retired: dict | None = None
    compacted: dict | None = None
    removed: tuple[str, ...] = ()  # lines of a compacted payload its compiled form lacks
    links: tuple[int, ...] = ()  # the turns a compiled notice points at
    note: int = 0  # an added row's place among the added rows: 0 the first, 1… later ones
    header: bool = True  # an added row holding the whole current state (compact's header)

    @property
    def anchor(self) -> str:
        """The row's id on the page: its turn, or ``added`` (``added-N`` for a later note)."""
        if self.turn is not None:
            return str(self.turn)
        return f"added-{self.note}" if self.note else "added"

    @property
    def changed(self) -> bool:
        return self.change != Change.KEPT

    @property
    def removed_text(self) -> str:
        return "\n".join(self.removed)


@dataclass(frozen=True)
class Gap:
    """A run of unchanged rows folded into one line when only changes are shown."""

    turns: tuple[int, ...]

    @property
    def first(self) -> int:
        return self.turns[0]

    @property
    def last(self) -> int:
        return self.turns[-1]


def block(text: str, *, json_part: bool = False) -> Block:
    """``text`` with its preview: itself when short, else its first line, cut short.

    Example:
        >>> block("short").long
        False
        >>> b = block("\\n".join(str(n) for n in range(10)))
        >>> b.long, b.preview
        (True, '0 …')
    """
    if len(text) <= SHORT_CHARS and text.count("\n") < SHORT_LINES:
        return Block(text, text, json_part)
    first = text.lstrip().split("\n", 1)[0]
    return Block(text, first[:PREVIEW_CHARS].rstrip() + " …", json_part)


def call_text(name: str | None, arguments: str | None) -> str:
    """A tool call as one readable line, the same on both sides.

    Example:
        >>> call_text("search", '{"from": "JFK"}')
        '→ search({"from": "JFK"})'
    """
    if not name and not arguments:
        return "→ a tool call (its name and arguments are not in the transcript)"
    return f"→ {name or 'a tool'}({arguments or ''})"


def original_side(message: Message) -> Side:
    calls = tuple(block(call_text(c.name, c.arguments)) for c in message.tool_calls)
    blocks = (block(message.text),) if message.text else ()
    return Side(message.role, message.name, blocks, calls)


def compiled_side(message: dict, *, text: str | None = None) -> Side:
    """A compiled message as shown; ``text`` in place of its content (a header cut off).

    Example:
        >>> call = {"id": "c1", "type": "function",
        ...         "function": {"name": "search", "arguments": "{}"}}
        >>> side = compiled_side({"role": "assistant", "content": None, "tool_calls": [call]})
        >>> side.blocks, side.calls[0].text
        ((), '→ search({})')
    """
    content = message.get("content") if text is None else text
    calls = tuple(_compiled_call(c) for c in message.get("tool_calls") or ())
    return Side(message.get("role", ""), message.get("name"), content_blocks(content), calls)


def _compiled_call(call) -> Block:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        return block(json.dumps(call, ensure_ascii=False), json_part=True)
    arguments = fn.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return block(call_text(fn.get("name"), arguments))


def content_blocks(content) -> tuple[Block, ...]:
    """A message's content as blocks: a string is one; in an array of content parts, each
    text part is its text and any other part (an image, audio) its JSON.

    Example:
        >>> image = {"type": "image_url", "image_url": {"url": "u"}}
        >>> [b.text for b in content_blocks([{"type": "text", "text": "hi"}, image])]
        ['hi', '{"type": "image_url", "image_url": {"url": "u"}}']
    """
    if content is None or content == "":
        return ()
    if isinstance(content, str):
        return (block(content),)
    if not isinstance(content, list):
        return (block(json.dumps(content, ensure_ascii=False), json_part=True),)
    return tuple(_part(part) for part in content)


def _part(part) -> Block:
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return block(part["text"])
    return block(json.dumps(part, ensure_ascii=False), json_part=True)


def alignment(read: list[tuple[int, Message]], tel: dict, count: int) -> dict:
    """Which compiled message each turn became, and which one the compile added.

    ``read`` is the turns as numbered (a number the compiler set aside is missing);
    ``count`` is how many messages were compiled. Returns ``{"turns": {turn: position},
    "added": position or None}``; a retired turn has no position.

    Example:
        >>> read = [(0, Message("system", "s")), (1, Message("user", "a")),
        ...         (2, Message("user", "b"))]
        >>> tel = {"mode": "compact", "retired_turn_indices": [1]}
        >>> alignment(read, tel, 3)
        {'turns': {0: 1, 2: 2}, 'added': 0}
    """
    retired = set(tel["retired_turn_indices"]) if tel["mode"] == "compact" else set()
    kept = [turn for turn, _ in read if turn not in retired]
    extra = count - len(kept)
    if extra not in (0, 1):
        raise ValueError(f"{count} compiled messages for {len(kept)} kept turns")
    shift = 1 if extra and tel["mode"] == "compact" else 0
    added = (0 if shift else count - 1) if extra else None
    return {"turns": {turn: n + shift for n, turn in enumerate(kept)}, "added": added}


def rows(read: list[tuple[int, Message]], compiled: list[dict], tel: dict) -> tuple[Row, ...]:
    """One row per original turn, in order, and a row for a message the compile added
    (first in compact mode, last in cache-friendly mode). A state header the compile put
    into the first kept system message is shown as its own row, above that turn."""
    if tel["mode"] == "cache_friendly":
        return _with_notes(read, compiled, tel)
    where = alignment(read, tel, len(compiled))
    retired = {r["turn"]: r for r in tel["retired_turns"]}
    compacted = {c["turn"]: c for c in tel["compacted_payloads"]}
    out, header = [], None
    if where["added"] is not None:
        header = compiled[where["added"]].get("content") or ""
    for turn, message in read:
        position = where["turns"].get(turn)
        shown = compiled[position] if position is not None else None
        text = None
        if shown is not None and position == 0 and tel["mode"] == "compact":
            header, text = _split_header(shown)
        out.append(_row(turn, message, shown, text, retired.get(turn), compacted.get(turn)))
    if header:
        added = Row(None, Change.ADDED, None, compiled_side({"role": "system"}, text=header))
        out.insert(0 if tel["mode"] == "compact" else len(out), added)
    return tuple(out)


def is_state_note(message: dict) -> bool:
    """Whether a compiled message is one the compile added whole (a cache-friendly state
    note): a system message that is nothing but our blocks.

    Example:
        >>> from compiler import compile_messages
        >>> history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
        >>> out, _ = compile_messages(history, mode="cache_friendly", invariants=["no refunds"])
        >>> [is_state_note(message) for message in out]
        [False, True, False]
        >>> is_state_note({"role": "system", "content": "Be brief."})
        False
    """
    content = message.get("content")
    if message.get("role") != "system" or not isinstance(content, str):
        return False
    body, stripped = strip_compiled_one(Message("system", content))
    return stripped and body is None


def _with_notes(read, compiled: list[dict], tel: dict) -> tuple[Row, ...]:
    """Cache-friendly rows: every turn kept in order, and each state note the compile
    placed between turns as an added row where it stands."""
    notes = [i for i, message in enumerate(compiled) if is_state_note(message)]
    own = [i for i in range(len(compiled)) if i not in set(notes)]
    if len(own) != len(read):
        raise ValueError(f"{len(own)} compiled messages for {len(read)} turns")
    compacted = {c["turn"]: c for c in tel["compacted_payloads"]}
    out: list[Row] = []
    turns = iter(read)
    for position, message in enumerate(compiled):
        if position in notes:
            side = compiled_side({"role": "system"}, text=message.get("content") or "")
            note = notes.index(position)
            out.append(Row(None, Change.ADDED, None, side, note=note, header=False))
            continue
        turn, original = next(turns)
        out.append(_row(turn, original, message, None, None, compacted.get(turn)))
    return tuple(out)


def _split_header(message: dict) -> tuple[str | None, str | None]:
    """The header a compact compile wrote into this message, and the message's own text."""
    content = message.get("content")
    if message.get("role") != "system" or not isinstance(content, str):
        return None, None
    body, stripped = strip_compiled_one(Message("system", content))
    if not stripped:
        return None, None
    own = body.content if body is not None else ""
    return content[: len(content) - len(own)].rstrip(), own


def _row(turn, message, shown, text, retired, compacted) -> Row:
    original = original_side(message)
    if shown is None:
        return Row(turn, Change.RETIRED, original, None, retired=_superseded(retired))
    side = compiled_side(shown, text=text)
    if compacted is not None:
        change = SHAPE_CHANGE.get(compacted["shape"], Change.COMPACTED)
        after = "\n".join(b.text for b in side.blocks)
        links = tuple(int(n) for n in TURN_REF.findall(after))
        removed = removed_lines(message.text, after) if change == Change.COMPACTED else ()
        return Row(turn, change, original, side, compacted=compacted, removed=removed, links=links)
    same = [b.text for b in side.blocks] == [b.text for b in original.blocks]
    same = same and [b.text for b in side.calls] == [b.text for b in original.calls]
    return Row(turn, Change.KEPT if same else Change.REWRITTEN, original, side)


TURN_REF = re.compile(r"\bturn (\d+)\b")


def _superseded(entry: dict | None) -> dict | None:
    if entry is None:
        return None
    by = sorted(entry["superseded_by"].items(), key=lambda item: (item[1], item[0]))
    return {**entry, "superseded": [{"slot": slot, "turn": turn} for slot, turn in by]}


def removed_lines(before: str, after: str, limit: int = 200) -> tuple[str, ...]:
    """The lines of ``before`` that ``after`` lacks, each JSON text pretty-printed first
    so a value is a line of its own.

    Example:
        >>> removed_lines("a\\nb\\nc", "a\\nc")
        ('b',)
        >>> removed_lines('{"id": 1, "rows": [1, 2]}', '{"id":1,"rows":[1]}')
        ('  2',)
        >>> removed_lines('[1, 2]', '[1, 2]')
        ()
    """
    kept = {_key(line) for line in _pretty(after).splitlines()}
    lines = [line for line in _pretty(before).splitlines() if _key(line) not in kept]
    more = (f"… and {len(lines) - limit} more lines",) if len(lines) > limit else ()
    return tuple(lines[:limit]) + more


def _key(line: str) -> str:
    """A line as compared: without its indent and a trailing comma (the last item of a
    list has none), so a value that moved up a level or to the end still matches."""
    return line.strip().rstrip(",")


def _pretty(text: str) -> str:
    """``text`` with each JSON line (or ``"key": value`` line, as compacted records are
    written) pretty-printed; a whole JSON text at once."""
    whole = _json_lines(text)
    if whole is not None:
        return whole
    return "\n".join(
        _json_lines(line) or _json_lines("{" + line + "}") or line for line in text.splitlines()
    )


def _json_lines(text: str) -> str | None:
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


def fold(all_rows: tuple[Row, ...]) -> tuple[Row | Gap, ...]:
    """The rows with each run of unchanged ones folded into a ``Gap``.

    Example:
        >>> kept = lambda n: Row(n, Change.KEPT, None, None)
        >>> folded = fold((kept(0), kept(1), Row(2, Change.RETIRED, None, None), kept(3)))
        >>> [r.turns if isinstance(r, Gap) else r.turn for r in folded]
        [(0, 1), 2, (3,)]
    """
    out: list[Row | Gap] = []
    for row in all_rows:
        if row.changed:
            out.append(row)
        elif out and isinstance(out[-1], Gap):
            out[-1] = Gap((*out[-1].turns, row.turn))
        else:
            out.append(Gap((row.turn,)))
    return tuple(out)
