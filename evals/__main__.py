"""python -m evals [run] [--suite FILE|NAME|dev|test]... [--seed S] [--provider NAME=URL[,model=M]]... [--trials N]
                [--concurrency N] [limits] [controls] [--out DIR]
python -m evals split --model M [--model M2] [--split test] [--seed S] [--out DIR]
python -m evals readme SUMMARY.json [SUMMARY.json]...
python -m evals compare A.json B.json [--out FILE]
python -m evals rescore DIR
python -m evals controls [--model M]... [--suites dev]
python -m evals suites [--out DIR]
python -m evals scale RUN... [--out FILE]

Runs every task of a suite through the harness against each provider, scores the answers against ground
truth computed from the files, and writes turns.jsonl, summary.json, report.md and latency.png.
By default: the scripted provider (solve scenario) and the local model server at $LLM_BASE_URL
(default http://127.0.0.1:8000/v1); a default server that is not running is started and stopped again.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from tqdm import tqdm

from evals import controls, families, report, scale, scores, served
from evals.compare import compare
from evals.compare import write as write_comparison
from evals.controls import MEASURED_SUITES
from evals.languages import LANGUAGES
from evals.manifest import manifest
from evals.providers import ProviderSpecError, resolve
from evals.rescore import rescore
from evals.runner import EvalSettings, TaskResult, run_suite
from evals.servers import ServerFailed
from evals.splits import Draw, languages_from, suites_named
from evals.suite import SUITES, SuiteError
from harness.app.flags import add_controls, profile_from
from harness.errors import HarnessError
from models.errors import ModelsError


class Progress:
    """A tqdm bar on a terminal; one line per finished task when stderr is a file or a pipe."""

    def __init__(self, total: int) -> None:
        self.live = sys.stderr.isatty()
        self.bar = tqdm(total=total, unit="task", disable=not self.live, dynamic_ncols=True)
        self.began, self.done, self.total = time.monotonic(), 0, total

    def __call__(self, label: str) -> None:
        self.done += 1
        if self.live:
            self.bar.set_postfix_str(label[:50])
            self.bar.update(1)
        else:
            print(f"[{self.done}/{self.total} {time.monotonic() - self.began:6.1f}s] {label}", file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m evals", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = top.add_subparsers(dest="action")
    add_run(commands.add_parser("run", help="run a suite (the default)"))
    add_ablations(commands.add_parser("controls", help="measure each small-model control on and off (slow)"))
    judged = commands.add_parser("split", help="serve each model in turn and run a split on it (the README's results)")
    judged.add_argument("--split", choices=["dev", "test"], default="test")
    judged.add_argument("--model", action="append", required=True, help="a registry model to serve and run")
    judged.add_argument("--trials", type=int, default=1)
    judged.add_argument("--out", type=Path, default=Path("results/split"))
    add_draw(judged)
    add_controls(judged)
    readme = commands.add_parser("readme", help="put a split's table (its summary.json files) in the README")
    readme.add_argument(
        "summary",
        type=Path,
        nargs="+",
        help="the split's summary.json (make report: docs/results/test); several join one table "
        "when they hold the same split, seed and languages",
    )
    readme.add_argument("--readme", type=Path, default=Path("README.md"))
    write = commands.add_parser("suites", help="write the generated families' suite files (scale-N, open-N)")
    write.add_argument("--out", default=str(SUITES), help="where (default evals/suites)")
    cost = commands.add_parser("scale", help="what a task costs per folder size, from runs of the scale-N suites")
    cost.add_argument("runs", nargs="+", type=Path, help="a results folder of `run --suite scale-N ...` or a summary")
    cost.add_argument("--out", type=Path, default=Path("results/scale.md"), help="the report (a .png beside it)")
    again = commands.add_parser("rescore", help="judge a split's recorded answers again with today's scorer")
    again.add_argument("out", type=Path, help="the split's folder (its summary.json); report.md is written again")
    diff = commands.add_parser("compare", help="per-task differences between two summary.json files")
    diff.add_argument("a")
    diff.add_argument("b")
    diff.add_argument("--out", type=Path, help="also write it to this file, headed by the command, revision and CPU")
    return top


def add_draw(command: argparse.ArgumentParser) -> None:
    """How a split is drawn: its seed, its size, its languages."""
    command.add_argument(
        "--seed",
        type=int,
        help="the seed a split is drawn from (dev: 0 unless given; test: a new one each time unless given; the "
        "seed is printed and written in the report, and the same seed draws the same tasks)",
    )
    command.add_argument("--generated", type=int, help="generated projects in a split (dev 1, test 2)")
    command.add_argument("--real", type=int, help="real projects in a split (dev 4, test 8)")
    command.add_argument(
        "--languages",
        default=",".join(LANGUAGES),
        help=f"the languages a split asks in, comma-separated (default {','.join(LANGUAGES)})",
    )


def add_run(go: argparse.ArgumentParser) -> None:
    go.add_argument(
        "--suite",
        action="append",
        default=[],
        help="a suite file or the name of one in evals/suites (repeatable; 'all': every suite there but seed; "
        "'dev' or 'test': a split drawn from --seed; default: the six file tasks)",
    )
    add_draw(go)
    go.add_argument(
        "--provider", action="append", default=[], metavar="NAME=URL[,model=M]", help="a provider (repeatable)"
    )
    go.add_argument("--trials", type=int, default=1, help="repeat each task N times (pass^k when N > 1)")
    go.add_argument("--max-turns", type=int, default=8)
    go.add_argument("--max-budget-usd", type=float, default=None)
    go.add_argument(
        "--timeout",
        type=float,
        default=EvalSettings.timeout_s,
        help=f"seconds per task run ({EvalSettings.timeout_s:g})",
    )
    go.add_argument("--max-tokens", type=int, default=384, help="cap on each model reply")
    go.add_argument("--concurrency", type=int, default=1, help="tasks run at once (default 1)")
    go.add_argument("--system", help="the system prompt (default: the small-model prompt for each task's tools)")
    go.add_argument("--out", help="results folder (default: results/<timestamp>)")
    add_controls(go)


def add_ablations(knobs: argparse.ArgumentParser) -> None:
    knobs.add_argument("--model", action="append", default=[], help="a registry model to serve and measure")
    knobs.add_argument("--no-scripted", action="store_true", help="leave the scripted provider out")
    knobs.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="tasks run at once (default 1: on a small machine tasks at once share its cores, and each task's "
        "time limit counts the wait)",
    )
    knobs.add_argument("--only", nargs="+", help="only these variants (by name)")
    knobs.add_argument("--out", default="results/controls.md")
    knobs.add_argument(
        "--suites", nargs="+", default=list(MEASURED_SUITES), help="suites by name (evals/suites), or dev (the split)"
    )


def run(args: argparse.Namespace) -> int:
    draw = Draw(args.seed, args.generated, args.real, languages_from(args.languages))
    suites = suites_named(args.suite, draw)
    command = "python -m evals " + " ".join(sys.argv[1:])
    if args.concurrency < 1 or args.trials < 1:
        raise ValueError("--concurrency and --trials must be at least 1")
    settings = EvalSettings(
        args.trials,
        args.max_turns,
        args.max_budget_usd,
        args.timeout,
        args.max_tokens,
        args.concurrency,
        profile_from(args),
        args.system,
    )
    out = Path(args.out or f"results/{datetime.now():%Y%m%d-%H%M%S}")
    finished: list[tuple[str, list[TaskResult]]] = []
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="eval-") as scratch:
        providers = resolve(args.provider, stack, out / "logs", settings.controls)
        for p in providers:
            print(f"eval: {p.name} = {p.model} at {p.base_url}", file=sys.stderr)
        progress = Progress(len(providers) * sum(len(s.tasks) for s in suites) * settings.trials)
        try:
            for suite in suites:
                folder = Path(scratch) / suite.name
                results = asyncio.run(run_suite(suite, providers, settings, folder, progress))
                finished.append((suite.name, results))
        finally:
            progress.close()
        facts = manifest(providers)
    written = []
    for name, results in finished:
        data = report.summary(results, settings.trials, name, asdict(settings), facts) | {"command": command}
        written += report.write_all(out / name if len(suites) > 1 else out, results, settings.trials, data)
        print(report.console(results, settings.trials, facts) + "\n")
    closing = report.by_suite(finished, settings.trials)
    drawn = sorted({s.split for s in suites if s.split})
    if drawn:
        every = [r for _, results in finished for r in results]
        split = {"split": ", ".join(drawn), "seed": draw.seed, "languages": list(draw.languages)}
        written += report.write_split(out, every, settings.trials, split, facts, command)
        print("\n".join(scores.tables(every, settings.trials)) + "\n")
    elif len(suites) > 1:
        written.append(report.write_suites(out, closing, command))
    print("\n".join(closing))
    shown = ", ".join(str(p) for p in written) if len(suites) == 1 else f"{out}/ (a folder per suite, and report.md)"
    if draw.seed is not None and drawn:
        shown += f"; drawn with --seed {draw.seed}"
    print("\nwrote " + shown)
    return 0


def rescored(args: argparse.Namespace, argv: list[str]) -> int:
    written, changed = rescore(args.out, "python -m evals " + " ".join(argv))
    print(f"{changed} verdicts changed; wrote " + ", ".join(str(p) for p in written))
    return 0


def compared(args: argparse.Namespace, argv: list[str]) -> int:
    print(compare(args.a, args.b))
    if args.out:
        print(f"wrote {write_comparison(args.a, args.b, args.out, 'python -m evals ' + ' '.join(argv))}")
    return 0


def written_suites(args: argparse.Namespace, argv: list[str]) -> int:
    for path in families.write(Path(args.out)):
        print(f"wrote {path}")
    return 0


def scaled(args: argparse.Namespace, argv: list[str]) -> int:
    command = "python -m evals " + " ".join(argv)
    print("wrote " + ", ".join(map(str, scale.write(args.runs, args.out, command))))
    return 0


def judged(args: argparse.Namespace, argv: list[str]) -> int:
    draw = Draw(args.seed, args.generated, args.real, languages_from(args.languages))
    settings = EvalSettings(trials=args.trials, controls=profile_from(args))
    return served.main(args.model, draw, args.split, settings, args.out, "python -m evals " + " ".join(argv))


def into_readme(args: argparse.Namespace, argv: list[str]) -> int:
    print(f"wrote {served.write_readme(args.readme, args.summary)}")
    return 0


def ablations(args: argparse.Namespace, argv: list[str]) -> int:
    suites = tuple(args.suites)
    return controls.main(args.model, not args.no_scripted, args.concurrency, args.only, Path(args.out), suites)


ACTIONS = {
    "run": lambda args, argv: run(args), "compare": compared, "suites": written_suites, "scale": scaled,
    "split": judged, "readme": into_readme, "controls": ablations, "rescore": rescored,
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in (*ACTIONS, "-h", "--help"):
        argv.insert(0, "run")
    args = parser().parse_args(argv)
    try:
        return int(ACTIONS[args.action](args, argv))
    except (SuiteError, ProviderSpecError, ServerFailed, ModelsError, HarnessError, ValueError) as exc:
        print(f"eval: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a results folder that is a file, a full disk, a folder that cannot be read
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"eval: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("eval: interrupted; nothing more was run", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
