"""Ground truth from a folder's files: each check kind against a folder built for it, wrong answers beside."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from evals.suite import Check
from evals.truth import Truth, TruthError, truth_for

FILES = {
    "config/app.ini": "[server]\nport = 8080\nhost = a.local\n",
    "config/old.ini.bak": "[server]\nport = 9090\n",
    "pyproject.toml": '[project]\nname = "p"\nrequires-python = ">=3.9"\n',
    "data/rows.csv": "id,name\n1,a\n2,b\n\n3,c\n",
    "logs/app.log": "ERROR disk full\nINFO ok\nERRORS are words\nerror again\n",
    "CHANGELOG.md": "# Changelog\n\n## 2.1.0 (2026-01-02)\n- fix\n\n## 2.0.0\n- start\n",
    "TODO.md": "# Plan\n- [x] ship the parser\n- [ ] write the docs\n* [ ] tag 2.1.0\n",
    "src/pkg/mod.py": (
        "class Widget:\n    def spin(self):\n        raise ValueError('x')\n\n"
        "async def go():\n    raise KeyError\n\ndef other():\n    raise TypeError()\n"
    ),
    "src/pkg/util.py": "# Widget helpers\ndef helper():\n    return 1\n",
    "Makefile": "test:\n\tpytest -q\n\nlint: test\n\truff check .\nVAR := x\n",
    "notes/a.txt": "talk to db-7.internal about v2.1\n",
    "notes/b.txt": "db-7.internal is down\n",
    "ports.txt": "connection refused on port 5432\n",
    "services.txt": "5432 postgres\n6379 redis\n",
    "z": "1",
}
OLDEST, NEWEST = "services.txt", "notes/b.txt"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("truth")
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        os.utime(root / name, (1_700_000_000, 1_700_000_000))
    os.utime(root / OLDEST, (1_600_000_000, 1_600_000_000))
    os.utime(root / NEWEST, (1_800_000_000, 1_800_000_000))
    return root


def truth(folder: Path, **check: Any) -> Truth:
    return truth_for(Check(**check), folder)


CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"kind": "names_file", "files_matching": r"refused"}, {"names": {"ports.txt"}}),
    ({"kind": "yes_names_file", "files_matching": "kubernetes"}, {"names": set(), "expect_yes": False}),
    ({"kind": "names_all", "files_matching": r"db-7\.internal"}, {"names": {"notes/a.txt", "notes/b.txt"}}),
    ({"kind": "defines", "symbol": "Widget"}, {"names": {"src/pkg/mod.py"}}),  # not util.py's comment
    ({"kind": "defines", "symbol": "go"}, {"names": {"src/pkg/mod.py"}}),  # async def
    ({"kind": "file_count"}, {"count": len(FILES)}),
    ({"kind": "file_count", "glob": "*.py"}, {"count": 2}),
    ({"kind": "file_count", "path": "config/"}, {"count": 2}),
    ({"kind": "largest_file"}, {"names": {"src/pkg/mod.py"}}),
    ({"kind": "smallest_file"}, {"names": {"z"}}),
    ({"kind": "newest_file"}, {"names": {NEWEST}}),
    ({"kind": "quotes_file", "path": "notes/b.txt"}, {"quote": "db-7.internal is down"}),
    ({"kind": "quotes_line", "path": "logs/app.log", "files_matching": "full"}, {"quote": "ERROR disk full"}),
    ({"kind": "line_count", "path": "logs/app.log", "files_matching": r"\bERROR\b"}, {"count": 2}),  # any case
    ({"kind": "row_count", "path": "data/rows.csv"}, {"count": 3}),  # no header, no blank line
    ({"kind": "config_value", "path": "config/app.ini", "key": "server.port"}, {"value": "8080", "others": {"9090"}}),
    ({"kind": "config_value", "path": "pyproject.toml", "key": "project.requires-python"}, {"value": ">=3.9"}),
    ({"kind": "latest_version", "path": "CHANGELOG.md"}, {"value": "2.1.0", "others": {"2.0.0"}}),
    (
        {"kind": "open_items", "path": "TODO.md"},
        {"items": ("write the docs", "tag 2.1.0"), "not_items": ("ship the parser",)},
    ),
    ({"kind": "folder_files", "path": "config"}, {"names": {"config/app.ini", "config/old.ini.bak"}, "every": True}),
    ({"kind": "shared_word", "path": "notes/a.txt, notes/b.txt"}, {"names": {"db-7.internal"}}),
    (
        {
            "kind": "joined",
            "path": "ports.txt",
            "files_matching": r"port (\d+)",
            "target": "services.txt",
            "target_pattern": r"^{value} (\w+)",
        },
        {"value": "postgres", "others": {"redis"}},
    ),
    ({"kind": "recipe", "path": "Makefile", "key": "test"}, {"quote": "pytest -q", "others": {"ruff check ."}}),
    ({"kind": "first_heading", "path": "CHANGELOG.md"}, {"quote": "Changelog"}),
    ({"kind": "raises", "symbol": "Widget.spin"}, {"value": "ValueError", "others": {"KeyError", "TypeError"}}),
    ({"kind": "raises", "symbol": "go", "path": "src/pkg/mod.py"}, {"value": "KeyError"}),
    ({"kind": "reads_every_file"}, {"names": set(FILES), "every": True}),
]


@pytest.mark.parametrize(("check", "expected"), CASES, ids=[f"{c['kind']}-{i}" for i, (c, _) in enumerate(CASES)])
def test_each_kind_computes_its_truth_from_the_files(
    folder: Path, check: dict[str, Any], expected: dict[str, Any]
) -> None:
    found = truth(folder, **check)
    for name, value in expected.items():
        got = getattr(found, name)
        assert (set(got) if isinstance(got, frozenset) else got) == value, name


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({"kind": "config_value", "path": "config/app.ini", "key": "server.timeout"}, "sets no server.timeout"),
        ({"kind": "open_items", "path": "CHANGELOG.md"}, "has no checklist"),
        ({"kind": "folder_files", "path": "nowhere"}, "no file is under nowhere/"),
        ({"kind": "recipe", "path": "Makefile", "key": "deploy"}, "no recipe for deploy"),
        ({"kind": "quotes_line", "path": "logs/app.log", "files_matching": "absent"}, "no line of logs/app.log"),
        ({"kind": "names_file", "files_matching": "(unclosed"}, "not a regular expression RE2 can use"),
        ({"kind": "raises", "symbol": "helper"}, "no function helper"),
    ],
)
def test_a_check_the_folder_cannot_answer_is_a_clear_error(folder: Path, check: dict[str, Any], message: str) -> None:
    with pytest.raises(TruthError, match=message.replace("(", r"\(")):
        truth(folder, **check)


def test_a_change_tasks_truth_is_the_folder_as_it_was(folder: Path) -> None:
    found = truth(folder, kind="sets_value", path="config/app.ini", key="server.port", value="9000")
    assert set(found.before) == set(FILES) and found.quote == FILES["config/app.ini"]
