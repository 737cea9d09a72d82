"""Exceptions of the `serve` package.

ServeError
├── APIError                  an error answered to the HTTP client in the OpenAI error shape
│   ├── InvalidRequest        400 invalid_request_error (malformed body, bad parameter)
│   │   ├── ContextLengthExceeded   400, code context_length_exceeded
│   │   └── ScriptExhausted         400, code script_exhausted (a scenario has no reply for this turn)
│   └── UnknownModel          404, code model_not_found (lists the valid names)
└── EngineError               llama.cpp failed while loading or generating (translated once, in the engine)
"""

from __future__ import annotations


class ServeError(Exception):
    """Base of every error raised by the servers."""


class APIError(ServeError):
    status = 500
    type = "server_error"
    code: str | None = None

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class InvalidRequest(APIError):
    status = 400
    type = "invalid_request_error"


class ContextLengthExceeded(InvalidRequest):
    code = "context_length_exceeded"


class ScriptExhausted(InvalidRequest):
    code = "script_exhausted"


class UnknownModel(APIError):
    status = 404
    type = "invalid_request_error"
    code = "model_not_found"

    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__(f"unknown model {name!r}; valid models: {', '.join(valid)}", param="model")


class EngineError(ServeError):
    """llama.cpp (through llama-cpp-python) failed."""
