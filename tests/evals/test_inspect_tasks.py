"""The suites as Inspect tasks: our harness as the solver through Inspect's model, and Inspect's react()."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import AppServer

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog


def inspect_eval(model: str, log_dir: Path, **task_options: str) -> list[EvalLog]:
    """Inspect's own eval() over the suites' tasks (imported here: Inspect takes seconds to import)."""
    from inspect_ai import eval as inspect_eval

    from evals.inspect_tasks import file_tasks

    return inspect_eval(file_tasks(**task_options), model=model, log_dir=str(log_dir), display="none")


@pytest.mark.parametrize("agent", ["harness", "react"])
def test_both_agents_score_6_of_6_on_the_scripted_solver_with_every_request_in_inspects_log(
    agent: str, scripted: AppServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_BASE_URL", scripted.base_url)
    monkeypatch.setenv("SCRIPTED_API_KEY", "none")
    [log] = inspect_eval("openai-api/scripted/solve", tmp_path, agent=agent)
    assert log.status == "success", log.error
    assert log.results is not None and log.results.scores[0].metrics["accuracy"].value == 1.0
    assert log.samples is not None and len(log.samples) == 6
    for sample in log.samples:
        score = next(iter((sample.scores or {}).values()))
        assert score.value == "C" and score.metadata == {"failure": None}, score
        models = [e for e in sample.events if e.event == "model"]
        assert len(models) >= 2  # the listing and the answer at least: every request went through Inspect
        assert any(e.output.message.tool_calls for e in models)
        assert not Path(sample.store["workspace"]).exists()  # each sample's folder is removed once scored


def test_a_wrong_answer_is_scored_wrong_with_the_evals_failure_class(
    scripted: AppServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_BASE_URL", scripted.base_url)
    monkeypatch.setenv("SCRIPTED_API_KEY", "none")
    [log] = inspect_eval("openai-api/scripted/plan", tmp_path)
    assert log.samples is not None
    verdicts = {s.id: next(iter((s.scores or {}).values())) for s in log.samples}
    assert verdicts["count"].value == "I" and verdicts["count"].metadata == {"failure": "wrong_answer"}


def test_a_choice_inspect_lacks_is_said_in_what_it_has() -> None:
    from inspect_ai.tool import ToolFunction

    from evals.inspect_tasks import choice_of
    from harness.core.protocols import ModelRequest
    from wire.types import ToolChoice, allowing

    tools: list[Any] = [{"type": "function", "function": {"name": n}} for n in ("a", "b")]

    def ask(choice: ToolChoice | None) -> object:
        return choice_of(ModelRequest([], tools, tool_choice=choice))

    assert ask(allowing("required", ["b"])) == "any" and ask(allowing("auto", ["b"])) == "auto"
    assert ask({"type": "function", "function": {"name": "b"}}) == ToolFunction("b")
    assert ask("required") == "any" and ask("none") == "none" and ask(None) is None
