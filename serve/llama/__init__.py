"""The local model server: a GGUF on llama.cpp (llama-cpp-python) behind an OpenAI-compatible endpoint."""
