"""The README's results table is read from a split's summary.json and written between its markers; the README
around it is left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.served import README_END, README_START, write_readme

SUMMARY = {
    "split": "test", "seed": 77, "languages": ["en", "de"], "command": "python -m evals split --seed 77",
    "manifest": {"git_revision": "0123456789abcdef", "cpu": "Some CPU", "cores": 2},
    "scores": {"qwen": {
        "model": "qwen", "all": {"right": 30, "total": 40},
        "project": {"generated": {"right": 20, "total": 24}, "real, go": {"right": 4, "total": 8},
                    "real, rust": {"right": 6, "total": 8}},
        "language asked in": {"en": {"right": 16, "total": 20}, "de": {"right": 14, "total": 20}},
    }},
}  # fmt: skip


def test_the_table_is_read_from_the_summary_with_intervals_and_where_it_comes_from(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    summary = tmp_path / "results" / "summary.json"
    summary.write_text(json.dumps(SUMMARY))
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n{README_START}\nold table\n{README_END}\n\nAfter.\n")
    write_readme(readme, summary)
    text = readme.read_text()
    assert text.startswith("# Title\n\n" + README_START) and text.endswith(README_END + "\n\nAfter.\n")
    assert "| qwen | 75% [60%, 86%] (30/40) | 83% [64%, 93%] (20/24) | 62% [39%, 82%] (10/16) |" in text
    assert "seed 77" in text and "`0123456789ab`" in text and "Some CPU (2 cores)" in text
    readme.write_text("# No block\n")
    with pytest.raises(ValueError, match="has no results block"):
        write_readme(readme, summary)
