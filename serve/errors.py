"""Exceptions of the `serve` package.

ServeError
├── APIError                  an error answered to the HTTP client in the OpenAI error shape
│   ├── InvalidRequest        400 invalid_request_error (malformed body, bad parameter, bad tool schema)
│   │   ├── ContextLengthExceeded   400, code context_length_exceeded (OpenAI's wording, which clients recognise)
│   │   └── ScriptExhausted         400, code script_exhausted (a scenario has no reply for this request)
│   ├── UnknownModel          404, code model_not_found (lists the valid names)
│   ├── RouteNotFound         404 for a path the server does not have
│   ├── PayloadTooLarge       413, the body is over the server's limit (refused before it is parsed)
│   └── Unavailable           503, the server cannot serve now (stopping, stalled, a helper process down)
└── EngineError               llama.cpp failed while loading or generating (translated once, in the engine)
"""

from __future__ import annotations


class ServeError(Exception):
    """Base of every error raised by the servers."""


class APIError(ServeError):
    status = 500
    type = "server_error"
    code: str | None = None

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code


class InvalidRequest(APIError):
    status = 400
    type = "invalid_request_error"


class ContextLengthExceeded(InvalidRequest):
    code = "context_length_exceeded"

    def __init__(self, context: int, prompt: int, whole: bool = True) -> None:
        counted = f"{prompt}" if whole else f"more than {context}"  # a prompt past the window is not read whole
        super().__init__(
            # OpenAI's sentence, with "prompt is too long": the words litellm and langchain-openai both look for
            f"This model's maximum context length is {context} tokens. However, your messages resulted in {counted} "
            "tokens: the prompt is too long. Please reduce the length of the messages.",
            param="messages",
        )


class ScriptExhausted(InvalidRequest):
    code = "script_exhausted"


class UnknownModel(APIError):
    status = 404
    type = "invalid_request_error"
    code = "model_not_found"

    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__(f"The model {name!r} does not exist; valid models: {', '.join(valid)}", param="model")


class RouteNotFound(APIError):
    status = 404
    type = "invalid_request_error"
    code = "not_found"


class PayloadTooLarge(APIError):
    status = 413
    type = "invalid_request_error"
    code = "payload_too_large"


class Unavailable(APIError):
    status = 503
    type = "server_error"
    code = "unavailable"


class EngineError(ServeError):
    """llama.cpp (through llama-cpp-python) failed."""
