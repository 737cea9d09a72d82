"""python -m benchmarks [--only harness scripted llama] [--model NAME]

Prints ratios measured side by side in one run on this machine. Nothing here asserts a time: machines
are noisy, so the goals are printed next to the numbers instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from benchmarks import harness_overhead, llama_server, scripted_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", nargs="+", choices=["harness", "scripted", "llama"], default=["harness", "scripted", "llama"]
    )
    parser.add_argument(
        "--model", choices=["smollm2-135m-instruct", "qwen2.5-0.5b-instruct"], help="model for the llama benchmark"
    )
    args = parser.parse_args(argv)
    sections: dict[str, Callable[[], list[str]]] = {
        "harness": harness_overhead.main,
        "scripted": scripted_server.main,
        "llama": lambda: llama_server.main(args.model),
    }
    for name in args.only:
        for line in sections[name]():
            print(line, flush=True)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
