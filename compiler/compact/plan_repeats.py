"""What a payload repeats of another still in front of the model, cut.

The last step of the payload plan (``compact.plan``), once every stale read and shape
is decided: SWE-agent's review advice after all but the latest edit, a JSON value an
earlier payload shows verbatim (written as a pointer to that turn), and status lines
that repeat what is stated above. What it reads of each payload is kept in the fold's
``Memo`` by payload index, with the text it was read from.
"""

from __future__ import annotations

import re

from compiler.compact.compact import Compacted, has_review_checklist, omit_review_checklist
from compiler.compact.repeats import (
    Repeat,
    drop_repeated_status,
    first_shown,
    inner_values,
    json_values,
    nested_fields,
    status_values,
    write_pointers,
)
from compiler.frozen import build
from compiler.memo import Memo

NO_STATUS = (None, None)


class RepeatCut:
    """The repeats of one history's payloads; ``memo`` is the fold's."""

    def __init__(self, clean, stated, statuses: bool, memo: Memo):
        self.clean = clean
        self.stated = stated
        self.statuses = statuses
        self.memo = memo

    def cut(self, done: dict, shown: list, gone: frozenset[int], fresh, number=None) -> dict:
        """``done`` with what a payload repeats of another one still in front of the model
        cut too, now that every stale read and shape is decided: SWE-agent's review
        advice after all but the latest edit, a JSON value an earlier payload shows
        verbatim, and status lines that repeat what is stated above. Payloads not yet
        answered and the latest message are left as they are; a retired turn or a
        stale-read notice shows nothing, so nothing counts as shown there. ``shown``: the
        payloads in front of the model, in order."""
        clean = self.clean
        if not shown:
            return done
        texts = {i: done[i].text if i in done else clean[i].content for i in shown}
        open_to = frozenset(  # an agent's own turn is no observation, even when it looks like one
            i
            for i in shown
            if i not in fresh and i != len(clean) - 1 and clean[i].role != "assistant"
        )
        why: dict[int, Repeat] = {}

        def change(index: int, text: str | None, reason: Repeat) -> None:
            if text is not None:
                texts[index] = text
                why.setdefault(index, reason)

        advised = [i for i in shown if self._read(has_review_checklist, i, texts[i])]
        for index in advised[:-1]:  # the latest keeps it
            if index in open_to:
                cut = self._read(omit_review_checklist, index, texts[index])
                change(index, cut, Repeat.CHECKLIST)
        self._refer_to_shown(shown, texts, open_to, change, number)
        # the latest payload keeps its status lines: they say where the agent is now
        dropped = {}
        if self.statuses:
            dropped = self._status_dropped(texts, gone, open_to - {shown[-1]}, change)
        for index, reason in why.items():
            base, text = done.get(index), texts[index]
            done[index] = self._repeated(index, base, text, reason, dropped.get(index, 0))
        return done

    def _refer_to_shown(self, shown, texts, open_to, change, number) -> None:
        """Each top-level JSON value of a payload that an earlier payload in front of the
        model shows verbatim, written as a pointer to that turn (``repeats.write_pointers``).
        A value is written out only when it equals one shown earlier (``repeats.first_shown``):
        few do."""
        found = {i: self._shown_json(i, texts[i]) for i in shown}
        asked = {}  # per payload open to this: its top-level objects and arrays
        for index in open_to:
            json = found[index]
            if json is not None and isinstance(json[0], dict):
                key = (nested_fields, index)
                asked[index] = self._memo(key, texts[index], nested_fields, json[0])
        if not any(asked.values()):
            return
        last = max(index for index, listed in asked.items() if listed)
        nan = any(json[3] for json in found.values() if json is not None)
        earlier: list[tuple[list, int]] = []  # what each payload so far shows, and its turn
        for index in shown:
            json = found[index]
            if json is None:
                continue
            without, turns = frozenset(), []
            for key, field in asked.get(index, ()):
                turn = first_shown(field, earlier, nan)
                if turn is not None:
                    turns.append((key, turn))
            if turns:
                turns = tuple(turns)
                key = (write_pointers, index, turns)
                text = self._memo(key, texts[index], write_pointers, *json[:3], turns)
                if text is not None:
                    change(index, text, Repeat.VALUE)
                    without = frozenset(key for key, _ in turns)  # what it shows no more
            if index == last:
                break  # no payload after it is asked about
            key = (inner_values, index, without)
            shows = self._memo(key, texts[index], inner_values, json[0], without)
            earlier.append((shows, index if number is None else number(index)))

    def _shown_json(self, index: int, text: str) -> tuple | None:
        """The JSON a payload's text shows (``repeats.json_values``), and whether that may
        hold a NaN, once per text."""
        known = self.memo.shown.get(index)
        if known is None or known[0] != text:
            # a payload as it was read, and the JSON its compaction opens with, are
            # decoded already (``compact_json`` keeps the latter there)
            json = json_values(text, self.memo.decoded) if _JSON_START.match(text) else None
            if json is not None:  # (a NaN equals nothing, so ``first_shown`` must know)
                json = (*json, "NaN" in json[1])
            known = self.memo.shown[index] = (text, json)
        return known[1]

    def _status_dropped(self, texts, gone, open_to, change) -> dict[int, int]:
        """SWE-agent's status lines that repeat the last ones stated in front of the model
        left out of each payload open to it; how many, per payload."""
        dropped: dict[int, int] = {}
        open_file = directory = None
        for index, message in enumerate(self.clean):
            if index in gone:
                continue
            text = texts.get(index, message.content) or ""
            if text is message.content:
                stated = self.stated[index]
            else:
                stated = self._read(status_values, index, text)
            # the first status lines in front of the model stay whole: they show the
            # model what the lines say, as the task turn of SWE-agent does
            if stated == NO_STATUS:
                continue  # no status lines (a stale-read notice has none either)
            if index in open_to and (open_file is not None or directory is not None):
                cut = self._read(drop_repeated_status, index, text, open_file, directory)
                if cut is not None:
                    change(index, cut[0], Repeat.STATUS)
                    dropped[index] = cut[1]
            open_file = stated[0] if stated[0] is not None else open_file
            directory = stated[1] if stated[1] is not None else directory
        return dropped

    def _read(self, function, index: int, text: str, *given):
        """``function(text, *given)`` of the payload at ``index``, once per text and
        arguments (``_memo``)."""
        return self._memo((function, index, *given), text, function, text, *given)

    def _memo(self, key: tuple, text: str, function, *arguments):
        """``function(*arguments)``, once per ``key`` (what is asked of which payload) and
        the payload's ``text``, which the result depends on; kept in ``read``. Keyed by
        index, no long text is hashed; a payload whose text changed is read again."""
        known = self.memo.read.get(key)
        if known is None or known[0] != text:
            known = self.memo.read[key] = (text, function(*arguments))
        return known[1]

    def _repeated(self, index, base, text, why, dropped) -> Compacted:
        """The payload's result with its repeats cut, built once per text."""
        memo = self.memo.repeated.get(index)
        if memo is not None and memo[0] is base and memo[1].text == text:
            known = memo[1]
            if known.status_lines_dropped == dropped and (base is not None or known.shape == why):
                return known
        size = len(self.clean[index].content)
        result = build(
            Compacted,
            text=text,
            shape=base.shape if base is not None else why.value,
            original_chars=size,
            compacted_chars=len(text),
            rows_total=base.rows_total if base is not None else 0,
            rows_kept=base.rows_kept if base is not None else 0,
            rows_dropped=base.rows_dropped if base is not None else 0,
            safety_rows_kept=base.safety_rows_kept if base is not None else 0,
            changed=True,
            status_lines_dropped=dropped,
        )
        self.memo.repeated[index] = (base, result)
        return result


_JSON_START = re.compile(r"\s*[\[{]")
