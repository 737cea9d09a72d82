"""Exceptions of the `harness` package.

HarnessError
├── ToolError                 a tool failed; the message is written for the model that will read it
│   └── PermanentToolError    the model cannot act on it (permission denied...): the run stops, failed
├── ProviderError             the model provider failed (translated from httpx once, in the client)
│   ├── ProviderUnavailable   connection errors, 429 and 5xx that outlived every retry
│   ├── ProviderRejected      a non-retryable answer (400, 401, 404...), with the provider's message
│   └── MalformedReply        a reply that failed validation (shape, duplicate tool call ids)
├── StateError                a run state cannot be loaded or saved
│   ├── InvalidState          a state that does not fit the types (also a ValueError); `where` names the field
│   ├── StateFileError        the file is corrupt, unreadable or of an unknown format version
│   ├── RunNotFound           no state file for that run id
│   ├── RunInUse              another process holds the run
│   └── NotResumable          the run ended completed or failed
├── Stopped                   Stop was pressed: raised out of StopSignal.race, ends the run interrupted
├── ContextTooSmall           under a context budget, even the newest turn (or a digest's question) does not fit
├── RegistryError             an invalid or duplicate tool name, or an invalid parameters schema
├── ApprovalError             approve/reject of a call that is not pending, or whose arguments changed
└── ConfigError               an invalid option (a command preset, a limit, a price); also a ValueError
"""

from __future__ import annotations

from pathlib import Path


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""


class ToolError(HarnessError):
    """A tool failed in a way the model can act on; the message goes back to it as the tool result."""


class PermanentToolError(ToolError):
    """A tool failed in a way no retry can fix; the run stops `failed` instead of looping to the cap."""


class ProviderError(HarnessError):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProviderUnavailable(ProviderError):
    pass


class ProviderRejected(ProviderError):
    pass


class MalformedReply(ProviderError):
    pass


class StateError(HarnessError):
    pass


class StateFileError(StateError):
    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path


class RunNotFound(StateError):
    pass


class RunInUse(StateError):
    pass


class NotResumable(StateError):
    pass


class RegistryError(HarnessError):
    pass


class ApprovalError(HarnessError):
    pass


class ConfigError(HarnessError, ValueError):
    """An invalid setting. A ValueError too, so a state file holding one fails validation naming the field."""


class InvalidState(StateError, ValueError):
    """A state that does not fit the types: `where` is the field path."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem


class Stopped(HarnessError):
    """Raised out of `StopSignal.race` when Stop was pressed first."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ContextTooSmall(HarnessError):
    """Under a context budget, even the newest turn does not fit."""
