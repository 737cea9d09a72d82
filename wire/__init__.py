"""The OpenAI chat-completions wire format, defined once for the harness and both servers.

`wire.types` holds the message, tool and tool-call shapes as TypedDicts (what the harness keeps in its
state) and the request/response bodies as pydantic models built over those same TypedDicts (what the
servers parse and the client validates). `wire.tokens` counts them with the o200k_base encoder, offline;
`wire.digest` is the question-beside-results format; `wire.errors` holds the one exception tree.
"""
