"""OpenAI-compatible chat-completions servers: `serve.scripted` (deterministic) and `serve.llama` (llama.cpp)."""
