""".gitignore rules, as ripgrep and git read them, for the workspace's walk: what a user's repository says is
not its own (a virtualenv, build output) is neither listed nor searched. Version-control folders (.git,
.hg, .svn) never are.

The patterns come from the workspace's files, so they are compiled for RE2 (`patterns.translated`), never
for Python's backtracking `re`. Kept: blank lines and comments, `!` to take a file back, a trailing `/` for
folders only, a `/` at the start or in the middle to anchor a pattern to its .gitignore's folder, `*`, `?`,
`[...]` and `**`. As in git, a file inside an ignored folder cannot be taken back.
"""

from __future__ import annotations

from dataclasses import dataclass

import re2

from harness.fs.patterns import options, translated

VCS_FOLDERS = frozenset((".git", ".hg", ".svn"))
MAX_RULES = 1000  # per .gitignore file; the rest are not read


@dataclass(frozen=True)
class Rule:
    base: str  # the folder of the .gitignore, relative to the root ("" or "src/")
    pattern: re2._Regexp
    anchored: bool
    folders_only: bool
    negated: bool

    def matches(self, path: str, folder: bool) -> bool:
        if self.folders_only and not folder:
            return False
        if not path.startswith(self.base):
            return False
        rest = path[len(self.base) :]
        target = rest if self.anchored else rest.rsplit("/", 1)[-1]
        return self.pattern.fullmatch(target) is not None


def rules_of(text: str, base: str) -> list[Rule]:
    """The rules of one .gitignore in the folder `base` (`""` for the root, else ending in `/`)."""
    rules: list[Rule] = []
    for raw in text.splitlines()[:MAX_RULES]:
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        line = line[1:] if negated else line.removeprefix("\\")
        folders_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        line = line.removeprefix("/")
        if not line:
            continue
        try:
            pattern = re2.compile(translated(line), options(case_sensitive=True))
        except re2.error:
            continue  # a line git could not use either
        rules.append(Rule(base, pattern, anchored, folders_only, negated))
    return rules


def ignored(path: str, folder: bool, rules: list[Rule]) -> bool:
    """Whether the path (relative to the root) is ignored: the last rule that matches it decides."""
    if path.rsplit("/", 1)[-1] in VCS_FOLDERS and folder:
        return True
    verdict = False
    for rule in rules:
        if rule.matches(path, folder):
            verdict = not rule.negated
    return verdict
