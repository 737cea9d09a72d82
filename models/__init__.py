"""Models: which model, where its GGUF comes from, and how its chat template and tool calls are spoken."""
