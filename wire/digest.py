"""The digest: a question beside what the tools returned, as one message a model reads in words.

The harness writes it for an answer turn asked as a digest (`answer_mode` digest, `answer_from_results`):
no call syntax of the transcript to imitate, none of the model's own replies to copy. The scripted
provider reads it back, so a scripted model answers a digest from the same results a real one sees.

    Question: Which file is the largest?

    What the tools returned:

    list_files() returned:
    a.log (12 bytes)

    read_file(path="a.log") returned:
    ...

    Answer the question: Which file is the largest?

A result holding a line that reads like a call header (`name(...) returned:`) is read back split there;
only the scripted provider reads digests, and only ones the harness wrote over real tool results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OPENING, BODY, CLOSING = "Question: ", "\n\nWhat the tools returned:\n\n", "\n\nAnswer the question: "
HEADER = re.compile(r"^(?P<name>[A-Za-z_][\w.-]*)\((?P<arguments>.*)\) returned:$", re.MULTILINE)
KEY = re.compile(r"([A-Za-z_]\w*)=")


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


def write(question: str, findings: Sequence[Finding]) -> str:
    found = "\n\n".join(f"{finding.call} returned:\n{finding.result}" for finding in findings)
    return f"{OPENING}{question}{BODY}{found}{CLOSING}{question}"


def read(text: str) -> tuple[str, list[Finding]] | None:
    """The question and findings of a digest `write` made; None for any other text."""
    if not text.startswith(OPENING) or BODY not in text:
        return None
    question, rest = text[len(OPENING) :].split(BODY, 1)
    if not rest.endswith(CLOSING + question):
        return None
    body = rest[: -len(CLOSING + question)]
    # a header opens the body or follows a blank line; one inside a result does not count
    headers = [h for h in HEADER.finditer(body) if h.start() == 0 or body[h.start() - 2 : h.start()] == "\n\n"]
    findings = []
    for index, header in enumerate(headers):
        end = headers[index + 1].start() - 2 if index + 1 < len(headers) else len(body)
        result = body[header.end() + 1 : end]
        findings.append(Finding(header["name"], arguments_of(header["arguments"]), result))
    return question, findings


def arguments_of(shown: str) -> Mapping[str, Any] | str:
    """`key="value", n=3` back into a mapping; text that is not in that form stays text."""
    decoder, arguments, at = json.JSONDecoder(), {}, 0
    while at < len(shown):
        key = KEY.match(shown, at)
        if key is None:
            return shown
        try:
            value, at = decoder.raw_decode(shown, key.end())
        except json.JSONDecodeError:
            return shown
        arguments[key[1]] = value
        if shown.startswith(", ", at):
            at += 2
        elif at < len(shown):
            return shown
    return arguments
