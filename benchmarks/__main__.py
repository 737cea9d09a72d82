"""python -m benchmarks [--only harness scripted engine steps serving] [--model NAME]

With LLAMA_SERVER=/path/to/llama-server set, the serving section measures llama.cpp's own server in the
same run (same GGUF, threads and slots, requests interleaved).

Prints ratios measured side by side in one run on this machine. Nothing here asserts a time: machines
are noisy, so the goals are printed next to the numbers instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from benchmarks import decode_steps, harness_overhead, llama_server, scripted_server, serving


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    every = ["harness", "scripted", "engine", "steps", "serving"]
    parser.add_argument("--only", nargs="+", choices=every, default=every)
    parser.add_argument(
        "--model",
        choices=["smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"],
        help="model for the engine and serving sections (default: the 0.5B coder if on disk)",
    )
    args = parser.parse_args(argv)
    sections: dict[str, Callable[[], list[str]]] = {
        "harness": harness_overhead.main,
        "scripted": scripted_server.main,
        "engine": lambda: llama_server.main(args.model),
        "steps": lambda: decode_steps.main(args.model),
        "serving": lambda: serving.main(args.model),
    }
    for name in args.only:
        for line in sections[name]():
            print(line, flush=True)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
