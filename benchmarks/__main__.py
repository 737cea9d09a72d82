"""python -m benchmarks [--only SECTION...] [--model NAME] [--out FILE]

Sections: harness index scripted engine steps serving contention forced (all by default).

With LLAMA_SERVER=/path/to/llama-server set, the serving section measures llama.cpp's own server in the
same run (same GGUF, threads and slots, requests interleaved).

Prints ratios measured side by side in one run on this machine. Nothing here asserts a time: machines
are noisy, so they are measured side by side with the peer in one run instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks import (
    decode_steps,
    forced_calls,
    harness_overhead,
    index_scale,
    llama_server,
    scripted_server,
    serving,
)
from evals.manifest import results_header


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    every = ["harness", "index", "scripted", "engine", "steps", "serving", "contention", "forced"]
    parser.add_argument("--only", nargs="+", choices=every, default=every)
    parser.add_argument(
        "--model",
        choices=["smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"],
        help="model for the engine, steps, serving and contention sections (default: the 0.5B coder; forced: all 3)",
    )
    parser.add_argument("--out", help="also write the output to this file (make bench: docs/results/bench.md)")
    args = parser.parse_args(argv)
    sections: dict[str, Callable[[], list[str]]] = {
        "harness": harness_overhead.main,
        "index": index_scale.main,
        "scripted": scripted_server.main,
        "engine": lambda: llama_server.main(args.model),
        "steps": lambda: decode_steps.main(args.model),
        "serving": lambda: serving.main(args.model),
        "contention": lambda: serving.contention_main(args.model),
        "forced": lambda: forced_calls.main([args.model] if args.model else None),
    }
    written = [results_header("python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:]))]
    for name in args.only:
        for line in sections[name]():
            print(line, flush=True)
            written.append(line)
        print()
        written.append("")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join([written[0], "", "```", *written[1:], "```", ""]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
