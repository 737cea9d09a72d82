"""How a file's bytes are shown to a model: text as text (a window of numbered lines when it is long), a
binary file described by its kind and size, never dumped. What one tool result may hold is sized to the
model's window."""

from __future__ import annotations

import json
from dataclasses import dataclass

MAX_LINE_CHARS = 500  # a longer line is shown cut, saying so


def named(path: str) -> str:
    """A path as one line of a result shows it: a name holding anything unprintable (a line break, an escape code,
    a bidi control) is written as a JSON string, escapes and all, so it can add no line of its own, forge no
    other result, and can still be passed back as a path."""
    return path if path.isprintable() and not path.startswith('"') else json.dumps(path)


def described(path: str, kind: str, size: int) -> str:
    return f"{path} is a binary file ({kind}, {size:,} bytes); it is not shown as text."


def output_chars(window: int | None) -> int:
    """What one tool result may hold: three eighths of the model's window in characters (logs and code take a
    token for every one or two characters of digits, so this stays under about a quarter of the window), from
    2,000 to 20,000 characters; 3,000 when the window is unknown."""
    if not window:
        return 3_000
    return max(2_000, min(20_000, window * 3 // 8))


@dataclass(frozen=True)
class Window:
    """Lines `first` to `last` (1-based) of a text of `total` lines."""

    text: str
    first: int
    last: int
    total: int

    @property
    def whole(self) -> bool:
        return self.first == 1 and self.last == self.total


def lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def window(text: str, offset: int, limit: int | None, chars: int) -> Window:
    """Up to `limit` lines from line `offset` on, as many as fit in `chars` (at least one), each cut to
    MAX_LINE_CHARS; numbered (`12: text`) unless the window is the whole text."""
    lines = lines_of(text)
    total = len(lines)
    first = min(max(1, offset), max(1, total))
    end = total if limit is None else min(total, first - 1 + max(1, limit))
    if first == 1 and end == total and len(text) <= chars:
        return Window(text, 1, total, total)
    shown: list[str] = []
    used = 0
    for number in range(first, end + 1):
        line = lines[number - 1]
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" [... line cut: {len(line):,} characters]"
        entry = f"{number}: {line}"
        if shown and used + len(entry) + 1 > chars:
            break
        shown.append(entry)
        used += len(entry) + 1
    return Window("\n".join(shown), first, first + len(shown) - 1, total)
