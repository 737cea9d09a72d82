"""The digest: a question beside what the tools returned, as one message a model reads in words.

The harness writes it for an answer turn asked as a digest (`answer_mode` digest, `answer_from_results`):
no call syntax of the transcript to imitate, none of the model's own replies to copy. The scripted
provider reads it back, so a scripted model answers a digest from the same results a real one sees.

    Question: Which file is the largest?

    What the tools returned:

    list_files() returned:
        1 file, largest first:
        a.log (12 bytes)

    read_file(path="a.log") returned:
        ...

    Answer the question: Which file is the largest?

A digest may also hold, before the closing question, the lines of the results that bear most on the question
(`Lines that bear on the question:`); `read` checks that block and returns the question and findings.

Every line of a result is indented, and a header never is, so nothing a tool returned (a file that
imitates this format, say) can read as a header or end a result: the reader takes only that layout.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OPENING, BODY, CLOSING = "Question: ", "\n\nWhat the tools returned:\n\n", "\n\nAnswer the question: "
HEADER = re.compile(r"(?P<name>[A-Za-z_][\w.-]*)\((?P<arguments>.*)\) returned:")
KEY = re.compile(r"([A-Za-z_]\w*)=")
INDENT = "    "


@dataclass(frozen=True)
class Finding:
    name: str
    arguments: Mapping[str, Any] | str  # the call's text as sent, when it was not a JSON object
    result: str

    @property
    def call(self) -> str:
        """`name(key="value", n=3)`: the values as JSON, so they read back exactly."""
        if isinstance(self.arguments, str):
            return f"{self.name}({self.arguments})"
        shown = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in self.arguments.items())
        return f"{self.name}({shown})"


MATCHES = "\n\nLines that bear on the question:\n"


def write(question: str, findings: Sequence[Finding], matches: Sequence[str] = ()) -> str:
    found = "\n\n".join(f"{finding.call} returned:\n{indented(finding.result)}" for finding in findings)
    shown = MATCHES + indented("\n".join(matches)) if matches else ""
    return f"{OPENING}{question}{BODY}{found}{shown}{CLOSING}{question}"


def indented(result: str) -> str:
    return "\n".join(INDENT + line for line in result.split("\n"))


def read(text: str) -> tuple[str, list[Finding]] | None:
    """The question and findings of a digest `write` made; None for any other text."""
    if not text.startswith(OPENING) or BODY not in text:
        return None
    question, rest = text[len(OPENING) :].split(BODY, 1)
    if not rest.endswith(CLOSING + question):
        return None
    body = set_apart(rest[: -len(CLOSING + question)], MATCHES)
    if body is None:
        return None
    lines, at = body.split("\n") if body else [], 0
    findings: list[Finding] = []
    while at < len(lines):
        if findings:  # findings are apart by one empty line
            if lines[at] != "":
                return None
            at += 1
        header = HEADER.fullmatch(lines[at]) if at < len(lines) else None
        if header is None:
            return None
        at += 1
        result = []
        while at < len(lines) and lines[at].startswith(INDENT):
            result.append(lines[at][len(INDENT) :])
            at += 1
        if not result:
            return None
        findings.append(Finding(header["name"], arguments_of(header["arguments"]), "\n".join(result)))
    return question, findings


def set_apart(body: str, head: str) -> str | None:
    """A digest's body without its last block under `head` (the matching lines), or None when that block's
    lines are not all indented. Only the writer puts the unindented line that heads a block there."""
    if head not in body:
        return body
    found, block = body.rsplit(head, 1)
    return found if all(line.startswith(INDENT) for line in block.split("\n")) else None


def arguments_of(shown: str) -> Mapping[str, Any] | str:
    """`key="value", n=3` back into a mapping; text that is not in that form stays text."""
    decoder, arguments, at = json.JSONDecoder(), {}, 0
    while at < len(shown):
        key = KEY.match(shown, at)
        if key is None:
            return shown
        try:
            value, at = decoder.raw_decode(shown, key.end())
        except (ValueError, RecursionError):
            return shown
        arguments[key[1]] = value
        if shown.startswith(", ", at):
            at += 2
        elif at < len(shown):
            return shown
    return arguments
