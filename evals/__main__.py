"""python -m evals [run] [--suite FILE] [--provider NAME=URL[,model=M]]... [--trials N] [limits] [--out DIR]
python -m evals compare A.json B.json

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
from datetime import datetime
from pathlib import Path
from typing import TextIO

from evals import report
from evals.compare import compare
from evals.manifest import manifest
from evals.providers import ProviderError, resolve
from evals.runner import Settings, run_suite
from evals.servers import ServerFailed
from evals.suite import DEFAULT_SUITE, SuiteError, load_suite
from models.errors import ModelsError


class ProgressBar:
    """A bar redrawn in place on a terminal; one line per task when stderr is a file or a pipe."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream, self.began, self.live = stream, time.monotonic(), stream.isatty()

    def __call__(self, done: int, total: int, label: str) -> None:
        filled = int(30 * done / max(1, total))
        elapsed = time.monotonic() - self.began
        line = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {elapsed:6.1f}s  {label[:60]:<60}"
        if self.live:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        else:
            self.stream.write(line.rstrip() + "\n")
        self.stream.flush()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m evals", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = top.add_subparsers(dest="action")
    go = commands.add_parser("run", help="run a suite (the default)")
    go.add_argument("--suite", default=str(DEFAULT_SUITE), help="suite file (default: the six file tasks)")
    go.add_argument(
        "--provider", action="append", default=[], metavar="NAME=URL[,model=M]", help="a provider (repeatable)"
    )
    go.add_argument("--trials", type=int, default=1, help="repeat each task N times (pass^k when N > 1)")
    go.add_argument("--max-turns", type=int, default=8)
    go.add_argument("--max-budget-usd", type=float, default=None)
    go.add_argument("--timeout", type=float, default=300.0, help="seconds per task run")
    go.add_argument("--max-tokens", type=int, default=384, help="cap on each model reply")
    go.add_argument("--out", help="results folder (default: results/<timestamp>)")
    diff = commands.add_parser("compare", help="per-task differences between two summary.json files")
    diff.add_argument("a")
    diff.add_argument("b")
    return top


def run(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    settings = Settings(args.trials, args.max_turns, args.max_budget_usd, args.timeout, args.max_tokens)
    out = Path(args.out or f"results/{datetime.now():%Y%m%d-%H%M%S}")
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="eval-") as scratch:
        providers = resolve(args.provider, stack, out / "logs")
        for p in providers:
            print(f"eval: {p.name} = {p.model} at {p.base_url}", file=sys.stderr)
        results = asyncio.run(run_suite(suite, providers, settings, Path(scratch), ProgressBar()))
        facts = manifest(providers)
    data = report.summary(results, settings.trials, suite.name, vars(settings), facts)
    written = report.write_all(out, results, settings.trials, data)
    print(report.console(results, settings.trials))
    print("\nwrote " + ", ".join(str(p) for p in written))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("run", "compare", "-h", "--help"):
        argv.insert(0, "run")
    args = parser().parse_args(argv)
    try:
        if args.action == "compare":
            print(compare(args.a, args.b))
            return 0
        return run(args)
    except (SuiteError, ProviderError, ServerFailed, ModelsError, ValueError) as exc:
        print(f"eval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
