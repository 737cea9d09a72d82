"""python -m serve.llama --model NAME [--gguf PATH] [--host 127.0.0.1] [--port 8000] [--threads N] [--ctx N]

Finds the model's GGUF (downloading it with a progress bar the first time, for Hub models), loads it in
llama.cpp and serves OpenAI chat completions with real tool calls on loopback.
"""

from __future__ import annotations

import argparse
import os
import sys

from models.errors import ModelsError
from models.registry import MODELS, model_spec
from models.weights import locate
from serve.errors import EngineError
from serve.http import run_server
from serve.llama.app import Served, create_app
from serve.llama.engine import Engine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m serve.llama", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", required=True, choices=list(MODELS), help="which model to serve")
    parser.add_argument("--gguf", help="use this GGUF file instead of the registry's")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="CPU threads (default: all cores)")
    parser.add_argument("--ctx", type=int, default=4096, help="context size in tokens (default 4096)")
    parser.add_argument("--cache-mb", type=int, default=512, help="memory for cached conversation states (default 512)")
    parser.add_argument(
        "--no-prompt-cache", action="store_true", help="process every prompt in full (for measurements)"
    )
    args = parser.parse_args(argv)
    spec = model_spec(args.model)
    try:
        gguf = locate(spec, args.gguf)
        print(f"loading {spec.name} from {gguf}", file=sys.stderr, flush=True)
        engine = Engine(
            gguf, n_ctx=args.ctx, threads=args.threads, cache_mb=args.cache_mb, prompt_cache=not args.no_prompt_cache
        )
    except (ModelsError, EngineError) as exc:
        print(f"serve.llama: {exc}", file=sys.stderr)
        return 2
    print(
        f"serving {spec.name} on http://{args.host}:{args.port}/v1 (context {engine.n_ctx}, {engine.threads} threads)",
        file=sys.stderr,
        flush=True,
    )
    run_server(create_app(Served(engine, spec.name, spec.quantisation, spec.dialect)), args.host, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
