"""The stages as a fold over messages.

``Fold`` holds what the per-message stages derived from a history so far —
markup stripped, declarations read, kind, observations folded into the
register, read keys — and extends it one message at a time. ``finish`` then
does the whole-history work (retirement, stale reads, layout), which is linear
in the history and cheap. A full compile is ``Fold`` from empty; an agent
loop that calls again with one more turn resumes a copy of the previous
``Fold`` (see ``compiler.incremental``), so both take the same code path
and give the same bytes.
"""

from __future__ import annotations

import re

from compiler.compact import (
    Compacted,
    Repeat,
    compacts_longer_than,
    drop_repeated_status,
    elide,
    elide_record,
    first_shown,
    fresh_payloads,
    has_review_checklist,
    has_safety_signal,
    inner_values,
    json_values,
    nested_fields,
    next_read_key,
    omit_review_checklist,
    replaced_reads,
    status_values,
    write_pointers,
)
from compiler.compact.compact import compact
from compiler.compact.lossless import encoded
from compiler.facts import PROVENANCE_RANK
from compiler.frozen import build
from compiler.layout import (
    CHANGES_MARKER,
    REGISTER_MARKER,
    STATE_MARKER,
    STRIPPED_ROLES,
    declared_in_header,
    strip_compiled_one,
)
from compiler.layout.emit import emit, keyed_state_lines
from compiler.layout.recall import recall
from compiler.protocol import DeclareState, render_instruction
from compiler.read import Message, with_content
from compiler.state import Kind, RegisterFold, classify_next, extract_message
from compiler.state.requests import unread_request
from compiler.state.retire import retire
from compiler.types import Compilation, Options


class Fold:
    """Per-message stage results for a history, extendable and copyable."""

    def __init__(self, options: Options, *, by_item: bool = False):
        schema = options.schema
        self.options = options
        # how the caller counts turns: by_item, each message's place in the caller's list
        # (``line - 1``, which counts items the reader skipped); else as they were read.
        # ``sources`` holds, per clean message, its index in ``original``.
        self.by_item = by_item
        self.sources: list[int] = []
        # how many of the caller's items were read (by_item), skipped ones included
        self.items = 0
        self.keys: list = []
        self.original: list[Message] = []
        self.warnings: list = []
        self.clean: list[Message] = []
        self.kinds: list[Kind] = []
        self.read_keys: list[tuple] = []
        self.markup_stripped = 0
        self.carried: tuple = ()  # declared facts of a stripped header, not folded yet
        self.declare = DeclareState(schema, options.declaration_policy, options.value_policy)
        self.fold = RegisterFold(*((schema.immutable, schema.scopes) if schema else ()))
        self.task_seen = False
        self.calls: dict = {}
        self.shaped: dict[int, Compacted] = {}
        self.elided: dict[tuple[int, int], Compacted] = {}
        # JSON texts and the value each decodes to: payloads read as a record, compacted,
        # compared (stale.py), and the JSON a compaction wrote (compact_json), so the
        # repeats pass reads it back without decoding it
        self.decoded: dict[str, object] = {}
        # token counts of messages this fold holds, by id, then counter name: an
        # id is only a key while this fold keeps the message alive
        self.token_memo: dict = {}
        # per held message: its output dict (copied out) and compacted replacements
        self.dict_memo: dict = {}
        self.replacements: dict[int, tuple[Compacted, Message]] = {}
        # what ``_repeats`` reads of a payload, by index and with the text read: the JSON
        # it shows, and the result it built
        self.shown: dict[int, tuple] = {}
        self.repeated: dict[int, tuple[Compacted | None, Compacted]] = {}
        # what ``_repeats`` read of a payload's text, by what was asked of which payload: a
        # history compiled again with one more turn asks the same of every earlier one
        self.read: dict[tuple, tuple] = {}
        # per message, the SWE-agent status its text ends with (open file, directory),
        # and whether any message states one (few histories do)
        self.stated: list[tuple[str | None, str | None]] = []
        self.statuses = False
        # cache_friendly: each call point (an assistant turn) and the state lines before it
        self.points: list[tuple[int, tuple]] = []
        # cache_friendly: each payload's lossless re-encoding, None where there is none
        self.encoded: dict[int, Compacted | None] = {}

    def copy(self) -> Fold:
        twin = Fold.__new__(Fold)
        twin.__dict__.update(self.__dict__)
        lists = (
            *("keys", "original", "warnings", "clean", "kinds", "read_keys", "sources"),
            *("stated", "points"),
        )
        for name in lists:
            setattr(twin, name, list(getattr(self, name)))
        names = (
            *("calls", "shaped", "elided", "decoded", "token_memo", "dict_memo"),
            *("replacements", "shown", "repeated", "read", "encoded"),
        )
        for name in names:
            setattr(twin, name, dict(getattr(self, name)))
        twin.declare = self.declare.copy()
        twin.fold = self.fold.copy()
        return twin

    def extend(self, messages, keys=None, warnings=(), items=None) -> Fold:
        """Fold more messages in. ``keys`` identify the input items they came from;
        ``items`` is how many items those were (by default one per message, or per key)."""
        for message in messages:
            self.advance(message)
        if keys is not None:
            self.keys.extend(keys)
        if items is None:
            items = len(keys) if keys is not None else len(messages)
        self.items += items
        self.warnings.extend(warnings)
        return self

    def advance(self, message: Message) -> None:
        """Every per-message stage, for one more message."""
        self.original.append(message)
        if message.role in STRIPPED_ROLES:  # (only these can carry what a compile wrote)
            stripped, touched = strip_compiled_one(message)
            self.markup_stripped += touched
            if touched and message.role == "system" and self._holds_header(message, stripped):
                self._carry(declared_in_header(message.content), stripped is None)
            message = stripped
            if message is None:
                return
        clean = self.clean
        turn = len(clean)
        if self.carried:  # declared in a header this message held, or one just before it
            self._fold_carried(turn)
        if turn and message.role == "assistant" and self.options.mode == "cache_friendly":
            self.points.append((turn, keyed_state_lines(self.fold.result(), self._number)))
        self.sources.append(len(self.original) - 1)
        declare = self.declare
        before = len(declare.observations)
        message = declare.message(turn, message)
        previous = clean[-1] if clean else None
        kind, self.task_seen = classify_next(message, self.task_seen)
        self._observe(message, kind, turn, declare.observations[before:])
        self.read_keys.append(next_read_key(message, kind, previous, self.calls, self.decoded))
        clean.append(message)
        self.kinds.append(kind)
        stated = status_values(message.content or "")
        self.stated.append(stated)
        self.statuses = self.statuses or stated != _NO_STATUS

    def _holds_header(self, message: Message, stripped: Message | None) -> bool:
        """Whether a system message holds a state block where a compile writes one: at
        the head of the first message (``compact``), or as the whole of a message
        (``cache_friendly``'s register, or ``compact``'s header where the history had no
        system message, wherever a caller then put it: after its own system prompt, say).
        A block quoted anywhere else (a ``system:`` line in a pasted transcript) declares
        nothing."""
        text = message.content
        if len(self.original) == 1 and text.startswith(STATE_MARKER):
            return True
        return stripped is None and text.startswith((REGISTER_MARKER, STATE_MARKER, CHANGES_MARKER))

    def _carry(self, facts: tuple, gone: bool) -> None:
        """Declared facts read back from a stripped header (``emit.declared_in_header``).
        They hold as of where the header stood: a header that was a message of its own
        (``gone``) after the last turn read (a register at the tail) is folded at that
        turn, any other before the next message's own observations."""
        if not facts:
            return
        self.carried = (*self.carried, *facts)
        if gone and self.clean:
            self._fold_carried(len(self.clean) - 1)

    def _fold_carried(self, turn: int) -> None:
        self.fold.apply_turn(self.declare.carry(turn, self.carried))
        self.carried = ()

    def _observe(self, message: Message, kind: Kind, turn: int, declared) -> None:
        schema = self.options.schema
        inferred = []
        if schema is not None:
            skip = self.declare.keys_by_turn.get(turn, ())
            inferred = extract_message(message, kind, turn, schema, skip, self.decoded)
        if declared:
            batch = sorted((*inferred, *declared), key=lambda o: PROVENANCE_RANK[o.provenance])
            self.fold.apply_turn(batch, message.role)
        elif inferred:  # in provenance order already: the read path's, then the action path's
            self.fold.apply_turn(inferred, message.role)

    def finish(self, *, remember: bool = True) -> Compilation:
        """The whole-history stages: retire, compact, recall, emit. ``remember``: this
        fold is kept for later calls, so the result memoises what it builds from
        messages the fold holds; a one-off compile remembers nothing."""
        options = self.options
        compacting = options.mode == "compact"
        clean, kinds = tuple(self.clean), tuple(self.kinds)
        reg = self.fold.result()
        retired = ()
        if compacting:  # (the turns that call a tool are only asked for here)
            calling = frozenset(i for i, message in enumerate(clean) if message.tool_calls)
            task = next((i for i, m in enumerate(clean) if m.role == "user" and _says(m)), None)

            def carries_more(turn: int) -> bool:  # (asked only of a turn that would go)
                """A safety signal, or a user's request the schema has no slot for."""
                text = clean[turn].text
                if has_safety_signal(text):
                    return True
                if clean[turn].role != "user":
                    return False
                said = tuple(e.value for e in reg.history if turn in e.supports)
                return unread_request(text, said)

            speakers = tuple(message.role for message in clean)
            retired = retire(reg, kinds, calling, task, carries_more, speakers)
        gone = frozenset(r.turn for r in retired)
        numbers = self._numbers()
        number = numbers.__getitem__ if numbers is not None else None
        compacted = self._compacted(gone, number) if compacting else self._first_sight()
        hit = recall(options.recall_query, clean, tuple(sorted(gone)))
        instruction = ""
        if options.teach_protocol:
            instruction = render_instruction(options.schema.slot_names if options.schema else ())
        emitted = emit(
            clean,
            register=reg,
            retired=gone,
            compacted={i: self._replacement(i, c) for i, c in compacted.items()},
            mode=options.mode,
            invariants=options.invariants,
            recall=hit,
            instruction=instruction,
            number=number,
            points=tuple(self.points),
        )
        return build(  # Compilation(...), built as frozen.build builds
            Compilation,
            original=tuple(self.original),
            input=clean,
            kinds=kinds,
            register=reg,
            retired=retired,
            compacted=compacted,
            emitted=emitted,
            markup_stripped=self.markup_stripped,
            declared=self.declare.result(clean),
            options=options,
            recall=hit,
            instruction=instruction,
            numbers=numbers,
            skipped_at=self._skipped_at() if self._skipped(numbers) else None,
            token_memo=self.token_memo if remember else None,
            dict_memo=self.dict_memo if remember else None,
            held=self._held,
        )

    def _numbers(self) -> tuple[int, ...] | None:
        """Each clean message's turn number as the caller counts it: its place in the
        caller's list (``by_item``), or among the messages read from text. None where that
        is its index already, as it is unless an item was skipped or a compiled header
        stripped."""
        original = self.original
        if not original:
            return None
        if not self.by_item:
            return None if len(self.sources) == len(original) else tuple(self.sources)
        if len(self.sources) == len(original) == original[-1].line:
            return None
        return tuple(original[source].line - 1 for source in self.sources)

    def _number(self, turn: int) -> int:
        """One clean message's turn number as ``_numbers`` gives it (earlier turns keep
        theirs as the history grows)."""
        source = self.sources[turn]
        return self.original[source].line - 1 if self.by_item else source

    def _skipped(self, numbers) -> bool:
        """Whether the reader may have skipped an item of the caller's list: numbering
        moved, or items were read past the last message (a skipped item at the end)."""
        return numbers is not None or self.items > len(self.original)

    def _skipped_at(self) -> int | None:
        """Where the caller's list holds the first item the reader skipped (by_item only)."""
        if not self.by_item:
            return None
        for index, message in enumerate(self.original):
            if message.line - 1 != index:
                return index
        return len(self.original) if self.items > len(self.original) else None

    def _held(self, message: Message, origin: int | None) -> bool:
        """Whether an output message is one this fold keeps (so memos may key on it)."""
        if origin is None:
            return False
        if message is self.clean[origin]:
            return True
        replaced = self.replacements.get(origin)
        return replaced is not None and replaced[1] is message

    def _replacement(self, index: int, compacted: Compacted) -> Message:
        """The compacted payload's message, built once per compaction result."""
        memo = self.replacements.get(index)
        if memo is None or memo[0] is not compacted:
            if memo is not None:  # its message is dropped: so are the memos keyed on its id
                self.dict_memo.pop(id(memo[1]), None)
                self.token_memo.pop(id(memo[1]), None)
            memo = (compacted, with_content(self.clean[index], compacted.text))
            self.replacements[index] = memo
        return memo[1]

    def _compacted(self, gone: frozenset[int], number=None) -> dict[int, Compacted]:
        """Each payload compacted by its shape, or, when a later read replaced it and
        that is shorter, a stale-read notice; payloads the agent has not answered
        yet are left whole (``fresh_payloads``)."""
        replaced = replaced_reads(self.read_keys)
        fresh = fresh_payloads(self.clean, self.kinds)
        done, shown = {}, []  # shown: the payloads in front of the model, in order
        for index, kind in enumerate(self.kinds):
            message = self.clean[index]
            if kind is not Kind.MACHINE or index in gone or not message.content:
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
        return self._repeats(done, shown, gone, fresh, number)

    def _first_sight(self) -> dict[int, Compacted]:
        """``cache_friendly``: each payload as it is first shown, decided from it and the
        history before it alone, so the same in every compile from the first that sees
        it and no cached prefix is rewritten: JSON re-encoded losslessly where that is
        shorter (``compact.lossless``), else SWE-agent status lines that repeat the ones
        stated above left out (``repeats.drop_repeated_status``, as ``compact`` does)."""
        done = {}
        open_file = directory = None
        for index, kind in enumerate(self.kinds):
            known = self.encoded.get(index, _UNREAD)
            if known is _UNREAD:
                known = self._seen_first(index, kind, open_file, directory)
                self.encoded[index] = known
            if known is not None:
                done[index] = known
            stated = self.stated[index]
            open_file = stated[0] if stated[0] is not None else open_file
            directory = stated[1] if stated[1] is not None else directory
        return done

    def _seen_first(self, index: int, kind: Kind, open_file, directory) -> Compacted | None:
        message = self.clean[index]
        if kind is not Kind.MACHINE or message.role == "assistant" or not message.content:
            return None
        text = message.content
        found = encoded(text)
        if found is not None or self.stated[index] == _NO_STATUS:
            return found
        if open_file is None and directory is None:
            return None  # the first status lines shown stay: they show what the lines say
        cut = drop_repeated_status(text, open_file, directory)
        if cut is None:
            return None
        return build(
            Compacted,
            text=cut[0],
            shape=Repeat.STATUS.value,
            original_chars=len(text),
            compacted_chars=len(cut[0]),
            rows_total=0,
            rows_kept=0,
            rows_dropped=0,
            safety_rows_kept=0,
            changed=True,
            status_lines_dropped=cut[1],
        )

    def _repeats(self, done: dict, shown: list, gone: frozenset[int], fresh, number=None) -> dict:
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
        known = self.shown.get(index)
        if known is None or known[0] != text:
            # a payload as it was read, and the JSON its compaction opens with, are
            # decoded already (``compact_json`` keeps the latter there)
            json = json_values(text, self.decoded) if _JSON_START.match(text) else None
            if json is not None:  # (a NaN equals nothing, so ``first_shown`` must know)
                json = (*json, "NaN" in json[1])
            known = self.shown[index] = (text, json)
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
            if stated == _NO_STATUS:
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
        known = self.read.get(key)
        if known is None or known[0] != text:
            known = self.read[key] = (text, function(*arguments))
        return known[1]

    def _repeated(self, index, base, text, why, dropped) -> Compacted:
        """The payload's result with its repeats cut, built once per text."""
        memo = self.repeated.get(index)
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
        self.repeated[index] = (base, result)
        return result

    def _shaped(self, index: int) -> Compacted:
        known = self.shaped.get(index)
        if not isinstance(known, Compacted):
            message = self.clean[index]
            known = compact(message.content, tool_name=message.name, memo=self.decoded)
            self.shaped[index] = known
        return known

    def _loses_to(self, index: int, chars: int) -> bool:
        """Whether the payload's compaction is certainly longer than a notice of ``chars``,
        so it need not be made. Until it is made, ``shaped`` keeps the longest notice it
        was shown to lose to (an int)."""
        known = self.shaped.get(index)
        if isinstance(known, Compacted):
            return known.compacted_chars > chars
        if known is not None and known >= chars:
            return True
        if compacts_longer_than(self.clean[index].content, chars, memo=self.decoded):
            self.shaped[index] = chars
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
        if (index, shown) not in self.elided:
            text = self.clean[index].content
            if key.startswith("record ") or _JSON_ARRAY.match(text):
                later_text = self.clean[later].content
                result = elide_record(
                    text, later_text, replaced_by=shown, key=key, memo=self.decoded
                )
            else:  # a later file view may show only part of this one
                window = self._partly_shown(index, later, key)
                result = elide(text, replaced_by=shown, key=key, window=window)
            self.elided[(index, shown)] = result
        return self.elided[(index, shown)]


_JSON_START = re.compile(r"\s*[\[{]")
# a JSON array (not a "[File: ...]" header): its rows are its elements (``elide_record``)
_JSON_ARRAY = re.compile(r'\s*\[\s*[\[{"\]\d-]')
_NO_STATUS = (None, None)
_UNREAD = object()


def _says(message: Message) -> bool:
    """Whether a message holds any text (the task is the first user turn that does)."""
    return bool(message.content and message.content.strip())
