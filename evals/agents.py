"""python -m evals.agents: two harnesses, one model, one set of tasks, inside Inspect AI.

For each model named (served by `serve.llama` on a free port), runs a suite as Inspect tasks
(`evals/inspect_tasks.py`) three ways: Inspect's own `react()` agent, this harness with no controls, and
this harness with the `small` profile; all scored by the eval's ground truth. Prints one table and writes it
to `--out`; Inspect's logs go to `--logs` (read them with `inspect view --log-dir`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from evals.inspect_tasks import file_tasks
from evals.manifest import results_header
from evals.servers import ServerProcess

WAYS = (("react", "none"), ("harness", "none"), ("harness", "small"))


def measure(model: str, suite: str, logs: Path) -> list[str]:
    rows = []
    with ServerProcess("serve.llama", "--model", model, "--quiet") as server:
        os.environ["LOCAL_BASE_URL"], os.environ["LOCAL_API_KEY"] = server.base_url, "none"
        for agent, controls in WAYS:
            task = file_tasks(suite=suite, agent=agent, controls=controls)
            [log] = inspect_eval(task, model=f"openai-api/local/{model}", log_dir=str(logs), display="none")
            rows.append(row(model, agent, controls, log))
            print(rows[-1], flush=True)
    return rows


def row(model: str, agent: str, controls: str, log: EvalLog) -> str:
    """One way's line of the table: right of all, the model turns Inspect logged, the wrong answers by class."""
    samples = log.samples or []
    scores = [next(iter((s.scores or {}).values())) for s in samples]
    right = sum(score.value == "C" for score in scores)
    failures = Counter(str((score.metadata or {}).get("failure")) for score in scores if score.value != "C")
    wrong = ", ".join(f"{k} {n}" for k, n in sorted(failures.items())) or "none"
    turns = sum(len([e for e in s.events if e.event == "model"]) for s in samples)
    name = "Inspect react()" if agent == "react" else f"this harness, controls {controls}"
    return f"| {model} | {name} | {right}/{len(samples)} | {turns} | {wrong} |"


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(prog="python -m evals.agents", description=__doc__)
    top.add_argument("--model", action="append", required=True, help="a registry model to serve (repeatable)")
    top.add_argument("--suite", default="default")
    top.add_argument("--out", default="results/agents.md")
    top.add_argument("--logs", default="results/inspect-logs")
    args = top.parse_args(argv)
    out = Path(args.out)
    table = ["| model | agent | right | model turns | wrong answers by class |", "|---|---|---|---|---|"]
    for model in args.model:
        table += measure(model, args.suite, Path(args.logs))
    head = results_header("python -m evals.agents " + " ".join(sys.argv[1:] if argv is None else argv))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join([head, "", f"Suite `{args.suite}`, greedy.", "", *table]) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
