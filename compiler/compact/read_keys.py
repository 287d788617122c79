"""What a tool output reads, as a key: two outputs with the same key read the same thing.

An output is keyed by the call that made it (the tool and its canonical arguments), by
the file an editor window shows (``file_view``, with the window of lines it shows), by the
one-line command in the fence that ends a SWE-agent turn, or by the record it holds (a
JSON object naming an id, ``record_key``). ``compiler.compact.stale`` decides from these
keys which outputs a later one has replaced.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

from compiler.read import Message, canonical_dumps, decode_json
from compiler.state import Kind

FILE_VIEW = re.compile(r"^\[File: (.+?) \(\d+ lines total\)\]", re.MULTILINE)
NUMBERED_LINE = re.compile(r"^(\d{1,9}):", re.MULTILINE)  # (a line number, not any digits)
_CURRENT_DIRECTORY = re.compile(r"^\(Current directory: ([^\n)]+)\)", re.MULTILINE)
# SWE-agent's answer to an edit its linter refused: the window shows the edit as it
# would have looked, not the file, and the lint errors come first
NOT_APPLIED = "Your changes have NOT been applied"
_LINT_ERRORS = re.compile(r"^ERRORS:\s*\n(.*?)^This is how", re.MULTILINE | re.DOTALL)
_MACHINE = Kind.MACHINE  # (a global: looking a member up on its enum costs several times more)
# A one-line command in the fence that ends an agent's turn (SWE-agent's protocol).
_COMMAND = re.compile(r"```[^\n]*\n([^\n`]+)\n```\Z")

# One thing a payload is a read of: a key, and what it showed: a record's top-level
# fields, a file view's window, a call's or command's output, or None for a read that
# any later one replaces.
ReadKey = tuple[str, "frozenset[str] | Window | Output | None"]
_WORD = re.compile(r"\w+")
# what a call answers when it failed or found nothing
_FAILED = re.compile(
    r"\W*(?:error|exception|traceback|fatal|failed|failure)(?:\b|_)", re.IGNORECASE
)
_NOTHING = frozenset({"", "null", "none", "{}", "[]", '""', "''"})


class Output:
    """What a call or a shell command answered, for telling whether a later answer to the
    same call shows it again. A later answer replaces an earlier one when the earlier
    failed or found nothing, or when the later one did not and holds at least half of
    the earlier one's words: a failed retry, the next page of results, or ``ls`` in
    another directory replaces nothing.

    Example:
        >>> order = Output('{"order_id": "#W1", "status": "pending", "items": ["lamp"]}')
        >>> Output('{"order_id": "#W1", "status": "cancelled", "items": ["lamp"]}').replaces(order)
        True
        >>> Output("Error: 503 Service Unavailable").replaces(order)
        False
        >>> order.replaces(Output("Error: 503 Service Unavailable"))
        True
    """

    __slots__ = ("_words", "text")

    def __init__(self, text: str):
        self.text = text
        self._words: frozenset[str] | None = None

    def __repr__(self) -> str:
        return f"Output({self.text[:40]!r})"

    @property
    def failed(self) -> bool:
        text = self.text.strip()
        return text.lower() in _NOTHING or (len(text) < 2000 and bool(_FAILED.match(text)))

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(_WORD.findall(self.text.lower()))
        return self._words

    def replaces(self, earlier: Output) -> bool:
        if earlier.failed:
            return True
        if self.failed:
            return False
        return 2 * len(earlier.words & self.words) >= len(earlier.words)


@dataclass(frozen=True)
class Window:
    """The numbered lines of a file an editor view showed (0, 0: none), and whether
    it is the preview of an edit that was not applied."""

    first: int
    last: int
    preview: bool = False

    def replaces(self, earlier: Window) -> bool:
        """Whether this later view of the same file makes ``earlier`` stale: it is a
        real view showing at least half of the lines ``earlier`` showed. A view of
        another part of the file is not replaced, since what it showed is still there.
        A preview (an edit that was not applied) is replaced by any later view, and
        replaces only an earlier preview: the latest attempt, not the file.

        Example:
            >>> Window(1, 100).replaces(Window(51, 150)), Window(1, 100).replaces(Window(61, 160))
            (True, False)
            >>> attempt = Window(1, 100, preview=True)
            >>> attempt.replaces(Window(1, 100)), attempt.replaces(Window(90, 99, preview=True))
            (False, True)
        """
        if self.preview:
            return earlier.preview
        if earlier.preview or not earlier.last:
            return True
        shown = min(self.last, earlier.last) - max(self.first, earlier.first) + 1
        return 2 * shown >= earlier.last - earlier.first + 1


def read_keys(
    message: Message, calls: dict[str, tuple[str, str]], previous: Message | None = None
) -> tuple[ReadKey, ...]:
    """What a payload is a read of: a tool call with its arguments, a file shown in an
    editor window (with the lines shown), or else the one-line shell command the agent
    ran just before it.

    Example:
        >>> read_keys(Message("user", "[File: /a/b.py (12 lines total)]\\n1:x\\n2:y"), {})
        (('file /a/b.py', Window(first=1, last=2, preview=False)),)
        >>> read_keys(Message("user", "ok"), {}, Message("assistant", "Run it.\\n```\\nls\\n```"))
        (('command ls', Output('ok')),)
    """
    keys: list[ReadKey] = []
    text = message.content or ""  # (``message.text``, read once)
    if message.tool_call_id and message.tool_call_id in calls:
        name, arguments = calls[message.tool_call_id]
        if name:
            keys.append((f"call {name} {arguments}", Output(text)))
    view = file_view(text) if "[File: " in text else None
    if view:
        keys.append(view)
    if not keys and previous is not None and previous.role == "assistant":
        command = _COMMAND.search(previous.text.rstrip())
        if command:
            keys.append((_command_key(command.group(1).strip(), text), Output(text)))
    return tuple(keys)


def _command_key(command: str, output: str) -> str:
    r"""A shell command as a read: with the directory its output says it ran in, so
    ``ls`` in ``/repo`` and ``ls`` in ``/repo/src`` are two reads, not one replaced.

    Example:
        >>> _command_key("ls", "a.py\n(Open file: n/a)\n(Current directory: /repo/src)")
        'command ls in /repo/src'
        >>> _command_key("ls", "a.py")
        'command ls'
    """
    directory = _CURRENT_DIRECTORY.search(output) if "(Current directory: " in output else None
    if directory is None:
        return f"command {command}"
    return f"command {command} in {directory.group(1).strip()}"


def file_view(text: str) -> tuple[str, Window] | None:
    r"""The file an editor window shows, as an absolute path when the output names its
    current directory, and the window's lines.

    Example:
        >>> file_view("[File: src/a.py (9 lines total)]\n4:x\n5:y\n(Current directory: /repo)")
        ('file /repo/src/a.py', Window(first=4, last=5, preview=False))
    """
    view = FILE_VIEW.search(text)
    if view is None:
        return None
    path = view.group(1).strip()
    if not path.startswith("/"):
        directory = _CURRENT_DIRECTORY.search(text, view.end())
        if directory:
            path = posixpath.normpath(posixpath.join(directory.group(1).strip(), path))
    end = text.find("[File: ", view.end())
    first, last = _window(text, view.end(), len(text) if end == -1 else end)
    return f"file {path}", Window(first, last, NOT_APPLIED in text)


def _window(text: str, start: int, end: int) -> tuple[int, int]:
    """The first and last numbered line between ``start`` and ``end`` (0, 0: none),
    the last found by walking back from ``end`` a line at a time: a window ends a
    few lines of footer after its last numbered line, so the lines between are not
    all scanned."""
    first = NUMBERED_LINE.search(text, start, end)
    if first is None:
        return 0, 0
    stop = end
    while True:
        begins = text.rfind("\n", 0, stop) + 1  # the start of the line that ends at stop
        if begins <= first.start():
            return int(first.group(1)), int(first.group(1))
        last = NUMBERED_LINE.match(text, begins, stop)
        if last:
            return int(first.group(1)), int(last.group(1))
        stop = begins - 1


def lint_errors(text: str) -> list[str]:
    r"""The lint errors of an edit that was not applied (SWE-agent's answer), else none.

    Example:
        >>> lint_errors("ERRORS:\n- E999 IndentationError\nThis is how your edit would have "
        ...             "looked\nYour changes have NOT been applied.")
        ['- E999 IndentationError']
    """
    if NOT_APPLIED not in text:
        return []
    errors = _LINT_ERRORS.search(text)
    if errors is None:
        return []
    return [line.rstrip() for line in errors.group(1).split("\n") if line.strip()]


def record_key(text: str, memo: dict | None = None, tool: str | None = None) -> ReadKey | None:
    """The record a JSON object shows: its first id field with the value, and its fields.
    A bare ``id`` names no kind of record (user 7 and order 7 both have ``id: 7``), so
    its key also names the ``tool`` that returned it, where that is known. ``memo`` holds
    the JSON texts decoded before (``jsonio.decode_json``).

    Example:
        >>> key, fields = record_key('{"name": "Lamp", "product_id": "17", "price": 3}')
        >>> key, sorted(fields)
        ('record product_id="17"', ['name', 'price', 'product_id'])
        >>> record_key('{"id": 7, "name": "Ann"}', tool="get_user")[0]
        'record id=7 from get_user'
        >>> record_key('[{"order_id": "#W1"}]') is None
        True
    """
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        value = decode_json(stripped, memo)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for name, field in value.items():
        if _names_id(name) and _identity(field):
            source = f" from {tool}" if tool and name.lstrip("_").lower() == "id" else ""
            return f"record {name}={json.dumps(field)}{source}", frozenset(value)
    return None


def _names_id(name: str) -> bool:
    return name == "id" or name.endswith(("_id", "Id"))


def _identity(value) -> bool:
    """A value that can identify a record: a non-empty string or a whole number."""
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, int) and not isinstance(value, bool)


def _canonical(arguments: str, memo: dict | None = None) -> str:
    try:
        return canonical_dumps(decode_json(arguments, memo))
    except (ValueError, RecursionError):
        return arguments


def next_read_key(
    message: Message,
    kind: Kind,
    previous: Message | None,
    calls: dict,
    memo: dict | None = None,
    fields: dict | None = None,
) -> tuple[ReadKey, ...]:
    """What one message is a read of (none, or a read and a record); records its
    tool calls in ``calls`` first. ``memo``: as for ``record_key`` (the action path
    decodes the same arguments, ``extract.extract_actions``). ``fields``: the records'
    sets of fields read so far, each kept once (records of a kind share theirs: a set
    per record was about a quarter of the input's size on the airline dev corpus)."""
    for call in message.tool_calls:
        if call.id:
            calls[call.id] = (call.name, _canonical(call.arguments, memo))
    if kind is not _MACHINE:
        return ()
    found = read_keys(message, calls, previous)
    tool = message.name or calls.get(message.tool_call_id, ("",))[0]
    record = record_key(message.content or "", memo, tool)
    if record is None:
        return found
    if fields is not None:
        record = (record[0], fields.setdefault(record[1], record[1]))
    return (*found, record)
