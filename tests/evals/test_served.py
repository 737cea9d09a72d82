"""The README's results table is read from a split's summary.json and written between its markers; the README
around it is left as it was."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from evals.served import README_END, README_START, write_readme

SUMMARY: dict[str, Any] = {
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
    write_readme(readme, [summary])
    text = readme.read_text()
    assert text.startswith("# Title\n\n" + README_START) and text.endswith(README_END + "\n\nAfter.\n")
    assert "| qwen | 75% [60%, 86%] (30/40) | 83% [64%, 93%] (20/24) | 62% [39%, 82%] (10/16) |" in text
    assert "seed 77" in text and "`0123456789ab`" in text and "Some CPU (2 cores)" in text
    readme.write_text("# No block\n")
    with pytest.raises(ValueError, match="has no results block"):
        write_readme(readme, [summary])


def test_two_runs_of_one_split_join_one_table_each_naming_where_it_comes_from(tmp_path: Path) -> None:
    """Each coder's run of the same split and seed may come from its own command and revision: one row each,
    and the words under the table name both."""
    other = copy.deepcopy(SUMMARY)
    other["scores"] = {"bigger": {**SUMMARY["scores"]["qwen"], "model": "bigger", "all": {"right": 36, "total": 40}}}
    other["manifest"] = {"git_revision": "fedcba9876543210", "cpu": "Other CPU", "cores": 4}
    other["command"] = "python -m evals split --model bigger --seed 77"
    other["rescored_by"] = "python -m evals rescore b"
    paths = []
    for name, summary in (("a", SUMMARY), ("b", other)):
        (tmp_path / name).mkdir()
        paths.append(tmp_path / name / "summary.json")
        paths[-1].write_text(json.dumps(summary))
    readme = tmp_path / "README.md"
    readme.write_text(f"{README_START}\n{README_END}\n")
    write_readme(readme, paths)
    text = readme.read_text()
    assert "| qwen | 75% [60%, 86%] (30/40) |" in text and "| bigger | 90% [77%, 96%] (36/40) |" in text
    assert "qwen at git revision `0123456789ab` on Some CPU (2 cores)" in text
    assert "bigger at git revision `fedcba987654` on Other CPU (4 cores)" in text
    assert "seed 77`, judged again by `python -m evals rescore b` (" in text
    assert f"({tmp_path.as_posix()}/b/report.md)" in text

    other["seed"] = 78  # another draw: its rows are not comparable
    paths[1].write_text(json.dumps(other))
    with pytest.raises(ValueError, match="one split drawn from one seed"):
        write_readme(readme, paths)
    with pytest.raises(ValueError, match="qwen has rows in more than one summary"):
        write_readme(readme, [paths[0], paths[0]])
    assert "| bigger |" in readme.read_text()  # a refused table leaves the README as it was
