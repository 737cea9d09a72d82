"""The scripted provider: an OpenAI-compatible server whose reply is a pure function of the transcript."""
