"""Globs and search patterns a model writes, compiled for RE2."""

from __future__ import annotations

import time

import pytest

from harness.errors import ToolError
from harness.fs.patterns import glob_matcher, search_pattern

GLOBS = [  # (glob, path, matches)
    ("*.py", "src/pkg/core.py", True),  # no slash: a file's name, wherever it is
    ("*.py", "core.pyc", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/pkg/a.py", False),
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "src/pkg/deep/a.py", True),
    ("**/test_*.py", "tests/test_x.py", True),
    ("./docs/*.md", "docs/a.md", True),
    ("test_?.py", "test_1.py", True),
    ("test_?.py", "test_12.py", False),
    ("[Rr]EADME*", "README.md", True),
    ("a+b(c).txt", "a+b(c).txt", True),  # regex characters are literal in a glob
]


@pytest.mark.parametrize(("glob", "path", "expected"), GLOBS)
def test_globs_match_as_shells_and_ripgrep_read_them(glob: str, path: str, expected: bool) -> None:
    assert glob_matcher(glob)(path) is expected


def test_smart_case_literal_by_default_and_errors_in_words() -> None:
    assert search_pattern("timeout", False).search(b"TIMEOUT") is not None
    assert search_pattern("Timeout", False).search(b"timeout") is None
    assert search_pattern("a.c", False).search(b"abc") is None
    for bad, words in (("", "needs a pattern"), ("a\nb", "within one line"), ("x" * 2000, "longer than")):
        with pytest.raises(ToolError, match=words):
            search_pattern(bad, False)
    with pytest.raises(ToolError, match="RE2"):
        search_pattern("(?<=look)behind", True)


def test_a_hostile_glob_is_linear() -> None:
    matches = glob_matcher("*a" * 300 + "*b")
    began = time.monotonic()
    assert not matches("a" * 4000)
    assert time.monotonic() - began < 1
