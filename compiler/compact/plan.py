"""The payload plan: how each tool payload in front of the model is shown.

``compact`` mode compacts each payload by its shape, or writes a stale-read notice in
place of a read a later one replaced (whichever is shorter), then cuts what a payload
repeats of another still shown (review advice, JSON values, status lines);
``cache_friendly`` shows each payload as it was first seen, re-encoded losslessly where
that is shorter. What it builds is kept in the fold's ``Memo``, keyed by payload index,
so a history compiled again with one more turn builds only what is new.
"""

from __future__ import annotations

import re

from compiler.compact.compact import Compacted, compact, compacts_longer_than
from compiler.compact.line_forms import FORM_RUN, shared_forms
from compiler.compact.lossless import encoded
from compiler.compact.plan_repeats import NO_STATUS, RepeatCut
from compiler.compact.repeats import Repeat, drop_repeated_status
from compiler.compact.stale import elide, elide_record, fresh_payloads, replaced_reads
from compiler.compact.view_repeats import (
    FILE_VIEW_HEADER,
    file_headers,
    point_to_views,
    pointable_views,
    resolved,
    view_parts,
    view_path,
)
from compiler.frozen import build
from compiler.memo import Memo
from compiler.read import Message, with_content
from compiler.state import Kind


class PayloadPlan:
    """The payloads of one history as a compile shows them; ``memo`` is the fold's."""

    def __init__(self, clean, kinds, read_keys, stated, statuses: bool, memo: Memo, keep=True):
        self.clean = clean
        self.kinds = kinds
        self.read_keys = read_keys
        # per message, the SWE-agent status its text ends with (open file, directory),
        # and whether any message states one (few histories do)
        self.stated = stated
        self.statuses = statuses
        self.memo = memo
        # whether a later compile reuses ``memo``; if not, each payload's decoded JSON is
        # let go once nothing here reads it again (``_release``)
        self.keep = keep

    def held(self, message: Message, origin: int | None) -> bool:
        """Whether an output message is one this fold keeps (so memos may key on it)."""
        if origin is None:
            return False
        if message is self.clean[origin]:
            return True
        replaced = self.memo.replacements.get(origin)
        return replaced is not None and replaced[1] is message

    def replacement(self, index: int, compacted: Compacted) -> Message:
        """The compacted payload's message, built once per compaction result."""
        memo = self.memo.replacements.get(index)
        if memo is None or memo[0] is not compacted:
            if memo is not None:  # its message is dropped: so are the memos keyed on its id
                self.memo.dicts.pop(id(memo[1]), None)
                self.memo.tokens.pop(id(memo[1]), None)
            memo = (compacted, with_content(self.clean[index], compacted.text))
            self.memo.replacements[index] = memo
        return memo[1]

    def compacted(self, gone: frozenset[int], number=None) -> dict[int, Compacted]:
        """Each payload compacted by its shape, or, when a later read replaced it and
        that is shorter, a stale-read notice; payloads the agent has not answered
        yet are left whole (``fresh_payloads``)."""
        replaced = replaced_reads(self.read_keys)
        fresh = fresh_payloads(self.clean, self.kinds)
        done, shown = {}, []  # shown: the payloads in front of the model, in order
        release = self._release if not self.keep else _keep
        if not self.keep:
            self._release_arguments()
        for index, kind in enumerate(self.kinds):
            message = self.clean[index]
            if kind is not Kind.MACHINE or index in gone or not message.content:
                release(index)
                continue
            shown.append(index)
            if index in fresh and index not in replaced:
                continue  # the agent has not answered it yet: it stays whole
            if index not in replaced:
                result = self._shaped(index)
            else:  # a stale read: its notice, unless shaping cuts more
                notice = self._elided(index, *replaced[index], number)
                if notice.changed and self._loses_to(index, notice.compacted_chars):
                    result = notice  # shaping certainly cuts less: it is not done
                else:
                    result = self._shaped(index)
                    if notice.changed and notice.compacted_chars < result.compacted_chars:
                        result = notice
            if result.changed:
                done[index] = result
                release(index)  # what the model is shown now is the result's text
        cut = RepeatCut(self.clean, self.stated, self.statuses, self.memo)
        return cut.cut(done, shown, gone, fresh, number)

    def _release(self, index: int) -> None:
        """The payload's decoded JSON let go: read as a record (keyed by its stripped
        text) and compacted (by its text); a later read of it decodes it again."""
        text = self.clean[index].content
        if text:
            self.memo.decoded.pop(text, None)
            self.memo.decoded.pop(text.strip(), None)

    def _release_arguments(self) -> None:
        """The decoded arguments of every tool call let go: only the per-message stages
        read them."""
        decoded = self.memo.decoded
        for message in self.clean:
            for call in message.tool_calls:
                decoded.pop(call.arguments, None)

    def first_sight(self, number=None, cuts: bool = False) -> dict[int, Compacted]:
        """``cache_friendly``: each payload as it is first shown, decided from it and the
        history before it alone, so the same in every compile from the first that sees
        it and no cached prefix is rewritten: JSON re-encoded losslessly where that is
        shorter (``compact.lossless``), else SWE-agent status lines that repeat the ones
        stated above left out (``repeats.drop_repeated_status``, as ``compact`` does),
        and a file view's lines that an earlier view shows verbatim written as a pointer
        to it (``view_repeats``): any earlier view, or where checkpoints may cut (``cuts``)
        a recent one. ``pointed``: each view pointed at, and the first payload that points
        at it; a checkpoint never cuts it after that."""
        if not self.keep:  # (a lossless re-encoding decodes as it goes: no memo)
            self.memo.decoded.clear()
        # calls: the messages a call came before (checkpoints' call points); views: the
        # payloads that show a file view, and the directory each was shown in
        start, done, self.pointed, open_file, directory, calls, views = _sighted(self.memo)
        for index in range(start, len(self.kinds)):
            kind = self.kinds[index]
            here = self.stated[index][1] or directory  # the directory it was shown in
            known = self.memo.encoded.get(index, _UNREAD)
            if known is _UNREAD:
                recent = []
                if FILE_VIEW_HEADER in (self.clean[index].content or ""):
                    # (the files its headers name: those its windows show, and maybe more)
                    paths = _named_files(self.clean[index].content, here)
                    shown, read = _first_text(self.clean, done), self.memo.views
                    recent = pointable_views(
                        list(views), calls, shown, number, cuts, views.get, read, paths
                    )
                known = self._seen_first(index, kind, open_file, directory, recent, here)
                self.memo.encoded[index] = known
            if known is not None:
                done[index] = known
            for view in self.memo.pointed.get(index, ()):
                self.pointed.setdefault(view, index)
            if index and self.clean[index].role == "assistant":
                calls.append(index)
            elif kind is Kind.MACHINE and FILE_VIEW_HEADER in (self.clean[index].content or ""):
                views[index] = here
            stated = self.stated[index]
            open_file = stated[0] if stated[0] is not None else open_file
            directory = stated[1] if stated[1] is not None else directory
        if self.keep:  # (each kept as it is: the next compile reads on from copies)
            at = (len(self.kinds), done, self.pointed, open_file, directory, calls, views)
            self.memo.sighted["at"] = at
        return done

    def _seen_first(self, index, kind, open_file, directory, recent, here) -> Compacted | None:
        message = self.clean[index]
        if kind is not Kind.MACHINE or message.role == "assistant" or not message.content:
            return None
        text = message.content
        found = encoded(text)
        if found is not None:
            return found
        # (the first status lines shown stay: they show what the lines say)
        status = (open_file, directory)
        status = status if self.stated[index] != NO_STATUS and status != (None, None) else None
        shown, shape, dropped, pointed, read = _shown_first(text, recent, here, status)
        if pointed is not None:
            self.memo.pointed[index] = pointed
        if read is not _UNREAD:  # (a later view reads it as first shown)
            self.memo.views[index] = read
        if shape is None:
            return None
        return _seen_once(text, shown, shape, dropped)

    def _shaped(self, index: int) -> Compacted:
        known = self.memo.shaped.get(index)
        if not isinstance(known, Compacted):
            message = self.clean[index]
            known = compact(message.content, tool_name=message.name, memo=self.memo.decoded)
            self.memo.shaped[index] = known
        return known

    def _loses_to(self, index: int, chars: int) -> bool:
        """Whether the payload's compaction is certainly longer than a notice of ``chars``,
        so it need not be made. Until it is made, ``shaped`` keeps the longest notice it
        was shown to lose to (an int)."""
        known = self.memo.shaped.get(index)
        if isinstance(known, Compacted):
            return known.compacted_chars > chars
        if known is not None and known >= chars:
            return True
        if compacts_longer_than(self.clean[index].content, chars, memo=self.memo.decoded):
            self.memo.shaped[index] = chars
            return True
        return False

    def _partly_shown(self, index: int, later: int, key: str):
        """The later file view's window when it leaves out lines of this one's, else None."""
        if not key.startswith("file "):
            return None
        window, earlier = dict(self.read_keys[later]).get(key), dict(self.read_keys[index])[key]
        covered = window.first <= earlier.first and earlier.last <= window.last
        return None if covered or earlier.preview or not earlier.last else window

    def _elided(self, index: int, key: str, later: int, number=None) -> Compacted:
        # the notice names the later turn as the caller counts it, so that is the memo's key
        shown = later if number is None else number(later)
        if (index, shown) not in self.memo.elided:
            text = self.clean[index].content
            if key.startswith("record ") or _JSON_ARRAY.match(text):
                later_text = self.clean[later].content
                result = elide_record(
                    text, later_text, replaced_by=shown, key=key, memo=self.memo.decoded
                )
            else:  # a later file view may show only part of this one
                window = self._partly_shown(index, later, key)
                result = elide(text, replaced_by=shown, key=key, window=window)
            self.memo.elided[(index, shown)] = result
        return self.memo.elided[(index, shown)]


# a JSON array (not a "[File: ...]" header): its rows are its elements (``elide_record``)
_JSON_ARRAY = re.compile(r'\s*\[\s*[\[{"\]\d-]')
_UNREAD = object()
# where the first-sight pass starts on a history it has not read (``first_sight``)
_UNSIGHTED = (0, {}, {}, None, None, (), {})


def _first_text(clean, done: dict):
    """A payload's text as first shown, by index."""
    return lambda index: done[index].text if index in done else clean[index].content


def _sighted(memo: Memo) -> tuple:
    """Where ``first_sight`` reads on from: where the last compile of this history left
    off (what it found for each earlier payload is a function of the history up to it),
    each part a copy this compile may change."""
    start, done, pointed, open_file, directory, calls, views = memo.sighted.get("at", _UNSIGHTED)
    return start, dict(done), dict(pointed), open_file, directory, list(calls), dict(views)


def _shown_first(text: str, recent: list, here: str | None, status: tuple | None) -> tuple:
    """A payload as first shown: the lines an earlier view in ``recent`` shows written as
    a pointer, the status lines that repeat ``status`` (the open file and directory
    stated above) left out, and runs of one form as the form and its rows. Returns the
    text, why it changed (None where it did not), how many status lines went, the views
    pointed at (None for none), and for a file view the file a later view may find it
    shows (``view_path``, else ``_UNREAD``): each from the text read once where it can
    be (its ``view_parts``, one text's at a time)."""
    parts = view_parts(text) if FILE_VIEW_HEADER in text else None
    pointed = point_to_views(text, recent, here, parts) if recent else None
    shown, shape = (text, None) if pointed is None else (pointed[0], Repeat.LINES)
    cut = drop_repeated_status(shown, *status) if status is not None else None
    if cut is not None:
        shown, shape = cut[0], shape or Repeat.STATUS
    if parts is not None and shown is not text:
        parts = None  # (the text's lines let go before the shown text's are read)
        parts = view_parts(shown)
    formed = _formed(shown, parts)
    if formed is not None:
        shown, shape = formed, shape or Repeat.FORM
        parts = None if parts is None else view_parts(shown)
    read = _UNREAD if parts is None else view_path(shown, here, parts)
    dropped = cut[1] if cut is not None else 0
    return shown, shape, dropped, None if pointed is None else pointed[1], read


def _named_files(text: str, directory: str | None) -> frozenset[str]:
    """The files the headers of ``text`` name, ``resolved`` from the directory it was
    shown in: the views of other files are no use to it."""
    return frozenset(resolved(header.group(1), directory) for header in file_headers(text))


def _formed(text: str, parts: tuple | None = None) -> str | None:
    """``text`` with its runs of log lines of one form written as the form and its rows
    (``line_forms``), a file view's windows left as they are; ``parts``: the text's
    ``view_parts``, where the caller has them."""
    if text.count("\n") < FORM_RUN:
        return None
    _, windows, _ = view_parts(text) if parts is None else parts
    return shared_forms(text, [(start, end) for _, start, end in windows])


def _seen_once(text: str, shown: str, why: Repeat, dropped: int) -> Compacted:
    """A payload shortened at first sight by what it repeats (``why``), no shape compacting it."""
    return build(
        Compacted,
        text=shown,
        shape=why.value,
        original_chars=len(text),
        compacted_chars=len(shown),
        rows_total=0,
        rows_kept=0,
        rows_dropped=0,
        safety_rows_kept=0,
        changed=True,
        status_lines_dropped=dropped,
    )


def _keep(index: int) -> None:
    """A payload's decoded JSON kept, for a compile a later one resumes."""
