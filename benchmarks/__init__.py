"""Benchmarks: `make bench`. Ratios measured side by side in one run; no timed assertions anywhere."""
