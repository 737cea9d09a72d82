"""The serving core both servers share: request validation, the OpenAI responses and SSE, errors, endpoints,
metrics and the access log, over a `Backend` (the scripted script or the llama engine)."""
