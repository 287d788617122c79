"""Token counters: a cheap default estimate, and exact OpenAI BPE counts as an extra.

A *token counter* is any object with a ``name: str`` and a ``count(text: str) -> int``
(the :class:`TokenCounter` protocol). The name is reported in telemetry so every
number says how it was measured.

Two counters ship:

* :class:`CharEstimator` (the default, no dependencies): ``len(text) // 4``.
* :class:`ExactCounter`: the exact token count of OpenAI's ``o200k_base`` or
  ``cl100k_base`` BPE, through the optional ``exact`` extra (the ``rs-bpe``
  package, which ships its vocabularies inside the wheel and so works offline).

Counting text versus counting messages: a counter counts the tokens of *text*
only, so the empty string counts 0 with both counters (exact BPE gives 0 too,
which keeps the two interchangeable). Per-message overhead (role, delimiters) is
the caller's business; ``compiler.layout.telemetry.message_tokens`` counts each message
as at least 1.

Every counter is deterministic: the same text gives the same count on every run.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Protocol, runtime_checkable

from compiler.errors import CompilerError, OptionError

#: Encodings :class:`ExactCounter` can count.
ENCODINGS = ("o200k_base", "cl100k_base")

#: The encoding ``"exact"`` means: the one of GPT-4o, GPT-4.1, o1, o3 and later.
DEFAULT_ENCODING = "o200k_base"

_EXTRA_HINT = (
    'install the optional "exact" extra: pip install "contextgc-workbench[exact]"'
    " (it brings the rs-bpe package)"
)


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts tokens: a ``name`` for reports and a ``count`` method."""

    name: str

    def count(self, text: str) -> int:
        """The number of tokens in ``text``; 0 for the empty string."""
        ...


class CharEstimator:
    """The default estimate: one token per 4 characters, at least 1 for any text.

    It needs nothing installed and costs one ``len``. Characters are Unicode code
    points, so it underestimates scripts that BPE splits finely (CJK, emoji) and
    overestimates long runs of plain English words. The empty string counts 0.

    Example:
        >>> counter = CharEstimator()
        >>> counter.name
        'chars/4'
        >>> counter.count("")
        0
        >>> counter.count("hi")
        1
        >>> counter.count("hello world")
        2
        >>> counter.count("x" * 2048)
        512
    """

    __slots__ = ()
    name = "chars/4"

    def count(self, text: str) -> int:
        """``len(text) // 4``, but at least 1 for non-empty text and 0 for empty text."""
        return max(1, len(text) // 4) if text else 0

    def __repr__(self) -> str:
        return "CharEstimator()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharEstimator)

    def __hash__(self) -> int:
        return hash(CharEstimator)


class ExactCounter:
    """The exact number of BPE tokens OpenAI's ``encoding`` gives ``text``.

    Counts equal ``len(tiktoken.get_encoding(encoding).encode_ordinary(text))``:
    text that looks like a special token (``"<|endoftext|>"``) is counted as
    ordinary text, and lone surrogates are counted as U+FFFD, as tiktoken does.
    Counting is linear in the text's length, even for adversarial input such as
    one long run of a single letter.

    Needs the optional ``exact`` extra; without it construction raises
    :class:`~compiler.errors.CompilerError` saying what to install. An unknown
    ``encoding`` raises :class:`~compiler.errors.OptionError`.
    """

    __slots__ = ("_tokenizer", "encoding", "name")

    def __init__(self, encoding: str = DEFAULT_ENCODING):
        if encoding not in ENCODINGS:
            raise OptionError(
                f"unknown token encoding {encoding!r}; expected one of {', '.join(ENCODINGS)}"
            )
        self._tokenizer, version = _load_tokenizer(encoding)
        self.encoding = encoding
        self.name = f"{encoding} (rs-bpe {version})"

    def count(self, text: str) -> int:
        """The exact token count of ``text`` in this encoding; 0 for the empty string."""
        try:
            return self._tokenizer.count(text)
        except UnicodeEncodeError:
            # Lone surrogates cannot be UTF-8 encoded; tiktoken replaces them.
            return self._tokenizer.count(_replace_lone_surrogates(text))

    def __repr__(self) -> str:
        return f"ExactCounter({self.encoding!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExactCounter) and other.name == self.name

    def __hash__(self) -> int:
        return hash((ExactCounter, self.name))


def _replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, as tiktoken does."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@cache
def _load_tokenizer(encoding: str) -> tuple[Any, str]:
    """The rs-bpe tokenizer for ``encoding`` and rs-bpe's version, built once.

    The tokenizer is immutable, so one per encoding is shared by every counter.
    """
    try:
        from importlib.metadata import PackageNotFoundError, version

        from rs_bpe.bpe import openai
    except ImportError as exc:
        raise CompilerError(
            f"exact token counting ({encoding}) needs the rs-bpe package: {_EXTRA_HINT}"
        ) from exc
    try:
        package_version = version("rs-bpe")
    except PackageNotFoundError:  # pragma: no cover - importable but not installed
        package_version = "unknown"
    return getattr(openai, encoding)(), package_version


def default_counter() -> CharEstimator:
    """The counter used when none is asked for: the :class:`CharEstimator`.

    Example:
        >>> default_counter().name
        'chars/4'
    """
    return CharEstimator()


def resolve_counter(spec: Any = None) -> TokenCounter:
    """The token counter ``spec`` names.

    ``spec`` is one of:

    * ``None``, ``"chars"`` or ``"chars/4"``: the :class:`CharEstimator`;
    * ``"exact"``: an :class:`ExactCounter` for ``o200k_base``;
    * ``"o200k_base"`` or ``"cl100k_base"``: an :class:`ExactCounter` for it;
    * an object with a ``name`` string and a ``count`` method: returned as is.

    Names are matched ignoring case and surrounding spaces. There is no silent
    fallback: asking for an exact count without the ``exact`` extra installed
    raises :class:`~compiler.errors.CompilerError`; anything else raises
    :class:`~compiler.errors.OptionError`.

    Example:
        >>> resolve_counter(None).name
        'chars/4'
        >>> resolve_counter("chars").count("hello world")
        2
        >>> resolve_counter("words")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        compiler.errors.OptionError: unknown token counter 'words'; expected chars, exact, ...
    """
    if spec is None:
        return CharEstimator()
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in ("chars", "chars/4"):
            return CharEstimator()
        if key == "exact":
            return ExactCounter(DEFAULT_ENCODING)
        if key in ENCODINGS:
            return ExactCounter(key)
    elif callable(getattr(spec, "count", None)) and isinstance(getattr(spec, "name", None), str):
        return spec
    raise OptionError(
        f"unknown token counter {spec!r}; expected chars, exact, "
        f"{', '.join(ENCODINGS)} or an object with name and count"
    )
