"""Patterns a model writes, compiled for RE2, whose matching takes time linear in the text: Python's
backtracking `re` never sees them (a pattern like `(a*)*b` would hang it).

- a search pattern: literal text by default, an RE2 regular expression when asked; case-insensitive unless
  it holds a capital letter (ripgrep's smart case);
- a glob: `*` and `?` within one path component, `**` across components, `[abc]` a class; one without a `/`
  matches a file's name wherever it is (`*.py`), one with a `/` the path from the workspace's root. Turned
  into an RE2 expression by hand (fnmatch would hand it to `re`).
"""

from __future__ import annotations

from collections.abc import Callable

import re2

from harness.errors import ToolError
from wire.text import LONE_SURROGATE

MAX_PATTERN_CHARS = 1000
MAX_MEMORY = 8 << 20  # RE2's memory for one compiled pattern


def options(case_sensitive: bool, literal: bool = False) -> re2.Options:
    chosen = re2.Options()
    chosen.case_sensitive, chosen.literal, chosen.log_errors = case_sensitive, literal, False
    chosen.max_mem = MAX_MEMORY
    return chosen


def search_pattern(pattern: object, regex: bool) -> re2._Regexp:
    """A compiled search pattern (bytes), or a ToolError saying what is wrong with it."""
    if not isinstance(pattern, str) or not pattern:
        raise ToolError("a search needs a pattern: the text to look for, e.g. timeout")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters; search for a shorter part")
    if "\n" in pattern:
        raise ToolError("a pattern matches within one line; search for one line's text")
    if LONE_SURROGATE.search(pattern):
        raise ToolError("the pattern holds an invalid character")
    try:
        source = pattern if not regex else f"(?m){pattern}"  # ^ and $ at each line, as a line-wise grep has them
        return re2.compile(source.encode(), options(pattern != pattern.lower(), literal=not regex))
    except re2.error as exc:
        raise ToolError(f"the pattern is not a regular expression RE2 can use ({reason(exc)}); "
                        "search for literal text with regex false") from exc  # fmt: skip


def reason(exc: Exception) -> str:
    text = exc.args[0] if exc.args else exc
    return text.decode(errors="replace") if isinstance(text, bytes) else str(text)


def glob_matcher(glob: object) -> Callable[[str], bool]:
    """Whether a workspace path matches the glob (see the module's docstring)."""
    if not isinstance(glob, str) or not glob.strip():
        raise ToolError("a glob names files by pattern, e.g. *.py or docs/**/*.md")
    if len(glob) > MAX_PATTERN_CHARS:
        raise ToolError(f"the glob is longer than {MAX_PATTERN_CHARS} characters")
    if LONE_SURROGATE.search(glob) or "\x00" in glob:
        raise ToolError("the glob holds an invalid character")
    glob = glob.strip().removeprefix("./")
    try:
        compiled = re2.compile(translated(glob), options(case_sensitive=True))
    except re2.error as exc:
        raise ToolError(f"the glob {glob!r} cannot be used ({reason(exc)})") from exc
    if "/" in glob:
        return lambda path: compiled.fullmatch(path) is not None
    return lambda path: compiled.fullmatch(path.rsplit("/", 1)[-1]) is not None


def translated(glob: str) -> str:
    out, at = [], 0
    while at < len(glob):
        char = glob[at]
        if glob.startswith("**/", at):
            out.append("(?:.*/)?")
            at += 3
            continue
        if glob.startswith("**", at):
            out.append(".*")
            at += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := glob.find("]", at + 2)) != -1:
            body = glob[at + 1 : end]
            negate = body.startswith(("!", "^"))
            body = body[1:] if negate else body
            out.append(f"[{'^' if negate else ''}{body.replace(chr(92), chr(92) * 2)}]")
            at = end + 1
            continue
        else:
            out.append(re2.escape(char))
        at += 1
    return "".join(out)
