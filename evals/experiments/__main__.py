"""python -m evals.experiments [--only NAME ...] [--out FILE]

Runs every experiment against a scripted provider it starts on loopback, prints each table, writes them
all to one Markdown file, and exits non-zero naming each experiment whose invariant failed.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

from evals.experiments import EXPERIMENTS, Experiment
from evals.experiments.lab import InvariantFailed, Lab, Table
from evals.manifest import results_header
from evals.servers import ServerProcess


async def run_all(experiments: dict[str, Experiment], lab: Lab) -> tuple[list[Table], list[str]]:
    tables, failed = [], []
    for name, experiment in experiments.items():
        began = time.perf_counter()
        try:
            table = await experiment(lab)
        except InvariantFailed as exc:
            failed.append(f"{name}: {exc}")
            print(f"FAILED {name}: {exc}\n", flush=True)
            continue
        except Exception:
            failed.append(f"{name}: crashed")
            print(f"FAILED {name}: crashed\n{traceback.format_exc()}", flush=True)
            continue
        table.notes.append(f"({time.perf_counter() - began:.1f} s)")
        tables.append(table)
        print(table.text() + "\n", flush=True)
    return tables, failed


def markdown(tables: list[Table], failed: list[str], seconds: float) -> str:
    head = [
        "# Experiments",
        "",
        results_header("python -m evals.experiments " + " ".join(sys.argv[1:])),
        f"Python {platform.python_version()}, {seconds:.1f} s in all. Prices: $2.00 / $12.00 per million tokens.",
        "",
    ]
    tail = ["", "## Failed", *(f"- {line}" for line in failed)] if failed else []
    return "\n".join(head + [t.markdown() + "\n" for t in tables] + tail) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.experiments", description=__doc__)
    parser.add_argument("--only", nargs="+", choices=list(EXPERIMENTS), help="run only these experiments")
    parser.add_argument(
        "--out", default="results/experiments.md", help="Markdown file (make experiments: docs/results/experiments.md)"
    )
    args = parser.parse_args(argv)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="experiments-") as scratch, ServerProcess("serve.scripted") as server:
        chosen = {name: EXPERIMENTS[name] for name in args.only or EXPERIMENTS}
        tables, failed = asyncio.run(run_all(chosen, Lab(server.base_url, Path(scratch))))
    seconds = time.perf_counter() - began
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(markdown(tables, failed, seconds), encoding="utf-8")
    print(f"{len(tables)} experiments in {seconds:.1f} s; tables written to {out}")
    if failed:
        print("invariants failed:\n" + "\n".join(f"  {line}" for line in failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
