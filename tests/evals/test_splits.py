"""The splits: the same split and seed draw the same tasks in the same words; another seed draws others; dev
and test never share a project; every language is asked about as often as every other; every kind has three
wordings or more in each language; and a real project's tasks are drawn from its own files."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI, Response

from evals.languages import LANGUAGES
from evals.repos import PROJECTS, Project, projects
from evals.sources import Archive
from evals.splits import GENERATED_KINDS, REAL_KINDS, Dealer, real_suite, sample, split_suites
from evals.truth import truth_for
from evals.wordings import TOPICS, WORDINGS, check_complete
from tests.conftest import AppServer
from tests.evals.archives import tarball


def prompts(split: str, seed: int) -> list[str]:
    return [t.prompt for s in split_suites(split, seed, generated=2, real=0) for t in s.tasks]  # type: ignore[arg-type]


def test_the_same_seed_draws_the_same_tasks_and_another_seed_others() -> None:
    assert prompts("test", 11) == prompts("test", 11)
    assert prompts("test", 11) != prompts("test", 12)
    assert prompts("dev", 0) != prompts("test", 0)


def test_dev_and_test_never_share_a_project() -> None:
    dev = {p.archive for p in projects("dev")}
    test = {p.archive for p in projects("test")}
    assert dev and test and not dev & test
    drawn = {s.workspace.model_dump_json() for seed in range(5) for s in split_suites("dev", seed, 2, 0)}
    judged = {s.workspace.model_dump_json() for seed in range(5) for s in split_suites("test", seed, 2, 0)}
    assert not drawn & judged


def test_the_catalogue_holds_thirty_projects_or_more_in_four_languages_or_more_each_in_both_splits() -> None:
    assert len({p.archive.sha256 for p in PROJECTS}) == len(PROJECTS) >= 30
    languages = {p.language for p in PROJECTS}
    assert len(languages - {"typescript"}) >= 4
    for split in ("dev", "test"):
        assert {p.language for p in projects(split)} >= languages - {"typescript"}


def test_languages_are_dealt_in_turns_so_each_is_asked_about_equally() -> None:
    dealt = [language for _, language in zip(range(100), Dealer(random.Random(3)), strict=False)]
    assert Counter(dealt) == dict.fromkeys(LANGUAGES, 20)
    asked = Counter(t.language for s in split_suites("test", 5, generated=2, real=0) for t in s.tasks)
    assert max(asked.values()) - min(asked.values()) <= 1


def test_a_sample_spreads_over_the_languages_of_code() -> None:
    chosen = sample(projects("test"), 8, random.Random(1))
    assert len(chosen) == 8 and len({p.language for p in chosen}) >= 4


def test_every_kind_has_three_wordings_or_more_in_every_language_each_filled_by_its_task() -> None:
    assert check_complete() == []
    assert set(GENERATED_KINDS) | set(REAL_KINDS) <= set(WORDINGS)
    assert all(set(topic) == set(LANGUAGES) for topic in TOPICS.values())
    for suite in split_suites("test", 2, generated=1, real=0):
        for task in suite.tasks:
            assert "{" not in task.prompt and task.kind in GENERATED_KINDS


def test_the_generated_tasks_truth_is_computed_from_the_files(tmp_path: Path) -> None:
    suite = split_suites("test", 4, generated=1, real=0)[0]
    root = suite.build(tmp_path / "ws")
    for task in suite.tasks:
        truth_for(task.check, root)  # raises when a check asks what the folder cannot answer


PARSER = """function parseHeaderLine(line) {
  return line.split(':')
}
function formatStatusCode(code) {
  return String(code)
}
module.exports = { parseHeaderLine, formatStatusCode }
"""
CLIENT = """const { parseHeaderLine } = require('./parser')
function fetchAll() { return parseHeaderLine('a: b') }
"""
MANIFEST = {"name": "demo", "version": "3.1.4", "license": "MIT", "engines": {"node": ">=16"},
            "dependencies": {"left-pad": "^1.3.0"}}  # fmt: skip
PACKAGE = {
    "package/package.json": json.dumps(MANIFEST),
    "package/lib/parser.js": PARSER,
    "package/lib/client.js": CLIENT,
    "package/test/parser.test.js": "test('x', () => parseHeaderLine('a'))\n",
}


@pytest.fixture
def npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[bytes]:
    data = tarball(PACKAGE)
    app = FastAPI()
    app.get("/demo/-/demo-3.1.4.tgz")(lambda: Response(data))
    server = AppServer(app)
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", server.url)
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "cache"))
    yield data
    server.stop()


def test_a_real_projects_questions_come_from_its_manifest_and_its_code(npm: bytes, tmp_path: Path) -> None:
    chosen = Project("demo", "javascript", "test", Archive("npm", "demo", "3.1.4", hashlib.sha256(npm).hexdigest()))
    suite = real_suite("test", 1, chosen, random.Random(0), Dealer(random.Random(0)))
    asked = {t.kind: t for t in suite.tasks}
    wanted = {"version", "license", "runtime", "dependency", "defines", "uses", "quote_definition", "absent"}
    assert wanted <= set(asked)
    root = suite.build(tmp_path / "ws")
    assert truth_for(asked["version"].check, root).value == "3.1.4"
    assert truth_for(asked["runtime"].check, root).value == "16"
    assert truth_for(asked["dependency"].check, root).value == "1.3.0"
    assert truth_for(asked["license"].check, root).items == ("MIT",)
    uses = truth_for(asked["uses"].check, root)
    assert asked["uses"].check.symbol in ("parseHeaderLine", "fetchAll")
    if asked["uses"].check.symbol == "parseHeaderLine":
        assert uses.names == {"lib/client.js", "test/parser.test.js"} and uses.allowed == {"lib/parser.js"}
    assert truth_for(asked["absent"].check, root).expect_yes is False
