"""The agent harness: a loop over a serialisable run state, its tools, its store, its trace and its CLI."""
