"""The eval end to end against the scripted provider: 6/6 with identical figures on every trial, on two
suites whose answers differ, every report file written, and compare. `python -m evals` is driven in-process
through its `main`, as the console runs it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from evals.__main__ import main
from evals.suite import SUITES
from tests.conftest import AppServer

FIGURES = ("correct", "turns", "tool_runs", "prompt_tokens", "completion_tokens", "cost_usd", "answer")


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_eval(capsys: pytest.CaptureFixture[str]) -> Callable[..., Done]:
    """`python -m evals ARGS`: its exit code and what it printed."""

    def run(*args: str) -> Done:
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return Done(code, out.out, out.err)

    return run


@pytest.mark.slow
def test_scripted_scores_six_of_six_identically_on_every_trial_of_both_suites(
    scripted: AppServer, tmp_path: Path, run_eval: Callable[..., Done]
) -> None:
    outs = {}
    for suite in ("default", "generated"):
        out = tmp_path / suite
        done = run_eval(
            "run",
            "--suite",
            str(SUITES / f"{suite}.json"),
            "--provider",
            f"scripted={scripted.base_url},model=solve",
            "--trials",
            "3",
            "--out",
            str(out),
        )
        assert done.returncode == 0, done.stderr
        data = json.loads((out / "summary.json").read_text())
        results = data["results"]
        assert data["providers"]["scripted"]["correct"] == 18 and data["providers"]["scripted"]["pass_hat_k"] == 1.0
        for task in {r["task"] for r in results}:
            trials = [
                tuple(r[f] if not isinstance(r[f], list) else tuple(r[f]) for f in FIGURES)
                for r in results
                if r["task"] == task
            ]
            assert len(set(trials)) == 1, f"{suite}/{task} varies across trials: {trials}"
        assert "TOTAL turns=" in done.stdout and "correct 18/18" in done.stdout and "pass^3=1.00" in done.stdout
        outs[suite] = out
    answers = {
        s: {r["task"]: r["answer"] for r in json.loads((o / "summary.json").read_text())["results"]}
        for s, o in outs.items()
    }
    assert answers["default"]["largest"] != answers["generated"]["largest"]


def test_every_report_file_is_written(scripted: AppServer, tmp_path: Path, run_eval: Callable[..., Done]) -> None:
    out = tmp_path / "r"
    done = run_eval(
        "--provider",
        f"a={scripted.base_url},model=solve",
        "--provider",
        f"b={scripted.base_url},model=plan",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert {p.name for p in out.iterdir()} >= {"turns.jsonl", "summary.json", "report.md", "latency.png"}
    assert (out / "latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    turns = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert {t["provider"] for t in turns} == {"a", "b"} and all(0 < t["latency_ms"] < 60_000 for t in turns)
    summary = json.loads((out / "summary.json").read_text())
    manifest = summary["manifest"]
    assert manifest["libraries"]["llama-cpp-python"] and manifest["cores"] and manifest["git_revision"]
    assert "## a (`solve`)" in (out / "report.md").read_text()
    assert "side by side (tasks whose outcome differs first)" in done.stdout
    lines = done.stdout.splitlines()
    side = lines[lines.index("== side by side (tasks whose outcome differs first) ==") + 2 :]
    assert side[0].startswith("* ")  # `plan` answers one question right at most: differing tasks lead
    compared = run_eval("compare", str(out / "summary.json"), str(out / "summary.json"))
    assert compared.returncode == 0 and "0 of 12 task outcomes differ" in compared.stdout


def test_a_bad_suite_or_provider_is_a_clear_error(tmp_path: Path, run_eval: Callable[..., Done]) -> None:
    bad = tmp_path / "s.json"
    bad.write_text('{"name": "x"}')
    done = run_eval("--suite", str(bad), "--provider", "x=http://127.0.0.1:9/v1,model=m")
    assert done.returncode == 2 and f"{bad}: workspace: Field required" in done.stderr
    done = run_eval("--provider", "nonsense")
    assert done.returncode == 2 and "NAME=URL" in done.stderr
