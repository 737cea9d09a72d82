"""Text that is valid Unicode all the way down.

JSON can carry a lone surrogate (`"\\ud800"`); Python decodes it into a str that cannot be encoded as
UTF-8, so it breaks whatever writes it later (a file, a terminal, a tokenizer). At the boundary where
such text arrives, it is replaced by U+FFFD, the replacement character.
"""

from __future__ import annotations

import re
from typing import Any

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    return LONE_SURROGATE.sub("\ufffd", text)


def scrubbed(value: Any) -> Any:
    """`value` with every string (keys included) scrubbed; other values as they are."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrubbed(item) for item in value]
    if isinstance(value, dict):
        return {scrubbed(key): scrubbed(item) for key, item in value.items()}
    return value


# what a terminal acts on rather than shows: C0 controls but the line break and the tab, DEL, C1 controls (an
# escape sequence, a bell, OSC 52 that sets the clipboard), the line and paragraph separators, bidi controls
UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: str) -> str:
    """Text a person's terminal shows as it is: what a terminal would act on is written as an escape (`\\x1b`)."""
    return UNSHOWABLE.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100 else
                          f"\\u{ord(m.group(0)):04x}", text)  # fmt: skip
