""".gitignore rules as git reads them, compiled for RE2 whatever a repository's file says."""

from __future__ import annotations

import time

import pytest

from harness.fs.ignore import ignored, rules_of

CASES = [  # (rules, path, is a folder, ignored)
    ("*.log", "debug.log", False, True),
    ("*.log", "deep/down/debug.log", False, True),
    ("*.log\n!keep.log", "keep.log", False, False),
    ("build/", "build", True, True),
    ("build/", "build", False, False),  # a trailing slash: folders only
    ("/top.txt", "top.txt", False, True),
    ("/top.txt", "sub/top.txt", False, False),  # a leading slash anchors to the .gitignore's folder
    ("docs/*.md", "docs/a.md", False, True),
    ("docs/*.md", "docs/sub/a.md", False, False),  # a middle slash anchors; * stays in one component
    ("docs/**/*.md", "docs/sub/deeper/a.md", False, True),
    ("**/cache", "a/b/cache", True, True),
    ("# a comment\n\n", "# a comment", False, False),
    ("\\#hash", "#hash", False, True),
    ("[ab].txt", "b.txt", False, True),
    ("[!ab].txt", "c.txt", False, True),
    ("node_modules", "web/node_modules", True, True),
]


@pytest.mark.parametrize(("text", "path", "folder", "expected"), CASES)
def test_rules_read_as_git_reads_them(text: str, path: str, folder: bool, expected: bool) -> None:
    assert ignored(path, folder, rules_of(text, "")) is expected


def test_a_nested_gitignore_applies_below_its_folder_only() -> None:
    rules = rules_of("*.tmp", "sub/")
    assert ignored("sub/a.tmp", False, rules) and not ignored("a.tmp", False, rules)


def test_version_control_folders_are_always_ignored() -> None:
    assert all(ignored(name, True, []) for name in (".git", "sub/.hg", ".svn")) and not ignored(".git", False, [])


def test_a_hostile_gitignore_is_compiled_and_matched_in_linear_time() -> None:
    text = "\n".join(["**/" * 200 + "x", "*" * 5000 + "y", "[", "a" * 10_000, *(f"rule{n}" for n in range(5000))])
    began = time.monotonic()
    rules = rules_of(text, "")
    assert not ignored("a" * 4000 + "/" + "b" * 200, False, rules)
    # A backtracking engine would not finish this in hours; 10 s leaves room for a busy CI machine.
    assert time.monotonic() - began < 10 and len(rules) <= 1000
