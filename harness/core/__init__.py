"""The loop and what it needs: the run state and its config, the journal, the history sent to the model,
approvals, limits, the Stop signal, the trace events and the seams (protocols). Nothing here reads a file
or a flag; the application (`harness.app`) does."""
