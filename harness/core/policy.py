"""What the harness writes into a tool slot when it does not simply run the tool: error, reuse, refusal."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from harness.errors import PermanentToolError
from harness.prompts import ERROR
from wire.types import canonical

ErrorMode: TypeAlias = Literal["text", "silent", "fatal"]
Dedupe: TypeAlias = Literal["off", "reads", "all"]
SILENT_TEXT = f"{ERROR}something went wrong."


def error_text(exc: Exception) -> str:
    return f"{ERROR}{exc}"


@dataclass(frozen=True)
class ToolErrorPolicy:
    """How a failed tool call is reported.

    `text` (default): the error's message goes back to the model as the tool result, via `describe`.
    `silent`: the model is told only that something went wrong. `fatal`: the run fails with the error.
    An error the model cannot act on (PermanentToolError) stops the run `failed` unless
    `stop_on_permanent` is off, in which case it is reported like any other.
    """

    mode: ErrorMode = "text"
    describe: Callable[[Exception], str] = error_text
    stop_on_permanent: bool = True

    def result_text(self, exc: Exception) -> str:
        return SILENT_TEXT if self.mode == "silent" else self.describe(exc)

    def stops_run(self, tool: str, exc: Exception) -> str | None:
        """Why this error fails the run, or None when the model is told and the run goes on."""
        if isinstance(exc, PermanentToolError) and self.stop_on_permanent:
            return f"{tool} failed and retrying cannot help: {exc}"
        return f"{tool} failed: {exc}" if self.mode == "fatal" else None


def fingerprint(arguments: object) -> str:
    """What an approval is bound to: the call's exact arguments."""
    return hashlib.sha256(canonical(arguments).encode("utf-8", errors="surrogatepass")).hexdigest()


def signature(name: str, arguments: object) -> str:
    """Identity of a call for de-duplication: the tool and a digest of its canonical arguments (not the call id;
    not the arguments themselves, which a write's content makes as large as a file, and which the state keeps
    once already, in the transcript)."""
    return f"{name}:{fingerprint(arguments)[:32]}"


def may_reuse(dedupe: Dedupe, read_only: bool) -> bool:
    """Reads may be reused; writes only under `all`, which is unsafe: two deliberate identical writes become one."""
    return dedupe == "all" or (dedupe == "reads" and read_only)


def bound(text: str, limit: int) -> str:
    """Keep the head and the tail of an oversized tool output, with a marker saying what was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n[... {omitted:,} characters omitted ...]\n{text[-half:]}"
