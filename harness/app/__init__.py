"""The application around the loop: the CLI, building a run from its config (runtime), the HTTP model
client, the state store, the JSONL trace, OpenTelemetry, the summary, and reading the user's files."""
