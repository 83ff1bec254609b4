"""Reading SQL text for the schema rules: tokens, wall-clock expressions, where a ``CREATE`` is.

SQLite answers what the schema *is*; this module only answers two questions
the engine cannot: which expressions in an object's stored SQL read the wall
clock, and on which line of which ``*.sql`` file an object is created.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Token", "find_create", "tokens", "wall_clock_expressions"]

_TOKEN = re.compile(
    r"""
    (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>'(?:[^']|'')*(?:'|\Z))
    | (?P<identifier>"(?:[^"]|"")*(?:"|\Z)|`(?:[^`]|``)*(?:`|\Z)|\[[^\]]*(?:\]|\Z))
    | (?P<space>\s+)
    | (?P<word>[A-Za-z0-9_$\x80-\U0010ffff]+)
    | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical piece of SQL: its kind, its text and where it starts."""

    kind: str
    text: str
    start: int

    @property
    def value(self) -> str:
        """The unquoted text of a string or quoted identifier; the text of anything else."""
        if self.kind in ("string", "identifier") and len(self.text) >= 2:
            inner = self.text[1:-1]
            quote = self.text[0]
            return inner if quote == "[" else inner.replace(quote * 2, quote)
        return self.text


def tokens(sql: str) -> Iterator[Token]:
    """Every token of ``sql``, comments and whitespace included."""
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup
        assert kind is not None
        yield Token(kind, match.group(), match.start())


# Keywords SQLite evaluates to the current date or time.
_CLOCK_KEYWORDS = frozenset({"CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME"})
# Date functions that read the current time when given no time value at all.
_DATE_FUNCTIONS = frozenset({"date", "time", "datetime", "julianday", "unixepoch"})


def wall_clock_expressions(sql: str) -> list[str]:
    """Each expression in ``sql`` that reads the wall clock, in order, with comments ignored.

    ``'now'`` is matched as a string literal wherever it appears, since every
    date function takes it as the current time; a date function called with no
    time value at all reads the clock as well, and so does ``strftime(format)``.
    """
    code = [token for token in tokens(sql) if token.kind not in ("comment", "space")]
    found: list[str] = []
    for index, token in enumerate(code):
        if token.kind == "word" and token.text.upper() in _CLOCK_KEYWORDS:
            found.append(token.text.upper())
        elif token.kind == "string" and token.value.strip().lower() == "now":
            found.append(token.text)
        elif token.kind == "word" and _is_call(code, index):
            name = token.text.lower()
            arguments = _argument_count(code, index + 1)
            if (name in _DATE_FUNCTIONS and arguments == 0) or (
                name == "strftime" and arguments == 1
            ):
                found.append(f"{token.text}({'...' if arguments else ''})")
    return found


def _is_call(code: Sequence[Token], index: int) -> bool:
    return index + 1 < len(code) and code[index + 1].text == "("


def _argument_count(code: Sequence[Token], open_index: int) -> int:
    """How many arguments the parenthesised list starting at ``open_index`` holds."""
    depth = 0
    count = 0
    for token in code[open_index:]:
        if token.text == "(":
            depth += 1
            continue
        if token.text == ")":
            depth -= 1
            if depth == 0:
                return count
            continue
        if depth == 1:
            if count == 0:
                count = 1
            elif token.text == ",":
                count += 1
    return count


# A name as SQL may spell it: quoted four ways, or bare.
_NAME = (
    r"""(?:"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]|'(?:[^']|'')*'"""
    r"|[A-Za-z0-9_$\x80-\U0010ffff]+)"
)
_CREATE = re.compile(
    rf"""
    \bCREATE\s+(?:TEMP\s+|TEMPORARY\s+)?(?:UNIQUE\s+)?(?:VIRTUAL\s+)?
    (?P<kind>TABLE|INDEX|VIEW|TRIGGER)\s+
    (?:IF\s+NOT\s+EXISTS\s+)?
    (?:{_NAME}\s*\.\s*)?
    (?P<name>{_NAME})
    """,
    re.IGNORECASE | re.VERBOSE,
)


def _without_comments(sql: str) -> str:
    """``sql`` with every comment blanked, newlines kept, so offsets and lines do not move."""
    pieces = []
    for token in tokens(sql):
        if token.kind == "comment":
            pieces.append(re.sub(r"[^\n]", " ", token.text))
        else:
            pieces.append(token.text)
    return "".join(pieces)


def find_create(files: Sequence[Path], kind: str, name: str) -> tuple[Path, int] | None:
    """The file and line of the ``CREATE <kind>`` that names ``name``, searching ``files`` in order.

    ``kind`` is ``sqlite_master``'s type: table, index, view or trigger. Names
    compare without case, as SQLite compares them.
    """
    wanted = name.casefold()
    for path in files:
        try:
            text = _without_comments(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        for match in _CREATE.finditer(text):
            if match.group("kind").lower() != kind:
                continue
            found = Token("identifier", match.group("name"), 0)
            spelled = found.value if found.text[0] in "\"'`[" else found.text
            if spelled.casefold() == wanted:
                return path, text.count("\n", 0, match.start()) + 1
    return None
