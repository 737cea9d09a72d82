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
