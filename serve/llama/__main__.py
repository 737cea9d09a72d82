"""python -m serve.llama [--model NAME | --model default] [--gguf PATH] [--host 127.0.0.1] [--port 8000]
                       [--threads N] [--ctx N] [--parallel N] [--cache-mb N] [--no-prompt-cache] [--no-jump-forward]
                       [--grammar-timeout S] [--throughput] [--draft N]

Finds the model's GGUF (fetching and verifying it the first time), loads it in llama.cpp and serves OpenAI
chat completions with real tool calls on loopback. `--model default` picks the main job's model and says why.

By default the server is batch invariant: a request gets the same greedy reply alone, beside others, cached
or not. `--throughput` trades that for llama.cpp's fastest kernels (repacked weights, flash attention),
prompt and decode rows in shared calls, and prompt reuse to the token, as llama-server serves.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from models.choice import default_model
from models.errors import ModelsError
from models.registry import MODELS, ModelSpec, model_spec
from models.weights import file_sha256, locate
from serve.core.app import BodyLimits
from serve.core.run import run_server
from serve.errors import EngineError
from serve.llama.app import create_app
from serve.llama.backend import LlamaBackend, ModelFacts, Options
from serve.llama.engine import Engine
from serve.llama.kernels import repacking_fails
from serve.llama.modes import BatchInvariant, Mode, Throughput

MAX_SEQUENCES = 32
CHUNK, BATCH = 64, 512  # the batch-invariant prompt chunk; the most rows one llama_decode call takes


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m serve.llama", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    top.add_argument("--model", default="default", help=f"one of {', '.join(MODELS)}, or default")
    top.add_argument("--gguf", help="serve this GGUF file (the model name is then only its label)")
    top.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    top.add_argument("--port", type=int, default=8000)
    top.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="CPU threads (default: all cores)")
    top.add_argument("--ctx", type=int, default=8192, help="context of each conversation in tokens (default 8192)")
    top.add_argument("--parallel", type=int, default=4, help="requests decoded together (default 4)")
    top.add_argument(
        "--cache-mb", type=int, default=512, help="KV memory for conversations kept resident (default 512)"
    )
    top.add_argument("--no-prompt-cache", action="store_true", help="evaluate every prompt in full")
    top.add_argument("--no-jump-forward", action="store_true", help="sample every token, even grammar-forced ones")
    top.add_argument(
        "--chunk",
        type=int,
        help=f"prompt rows per call: aligned chunks when batch invariant (default {CHUNK}), at most this many beside "
        f"the decode rows with --throughput (default {BATCH})",
    )
    top.add_argument(
        "--throughput",
        action="store_true",
        help="llama.cpp's fastest kernels and shared calls; a reply may depend on what else runs",
    )
    top.add_argument(
        "--draft",
        type=int,
        default=0,
        help="prompt-lookup drafting: guess up to N next tokens from the conversation and check them in one call "
        "(default 0: off; see docs/benchmarks.md for what it gains on a CPU)",
    )
    top.add_argument(
        "--grammar-timeout", type=float, default=5.0, help="seconds a client's grammar may take to compile (5)"
    )
    top.add_argument("--max-body-mb", type=float, default=4.0, help="largest request body accepted (default 4)")
    top.add_argument("--quiet", action="store_true", help="no access log")
    return top


def choose(args: argparse.Namespace) -> tuple[str, ModelSpec | None]:
    if args.model == "default" and args.gguf is None:
        choice = default_model()
        print(f"model: {choice.spec.name}: {choice.why}", file=sys.stderr, flush=True)
        return choice.spec.name, choice.spec
    if args.model in MODELS:
        return args.model, model_spec(args.model)
    if args.gguf is None:
        model_spec(args.model)  # raises, naming the models there are
    return (Path(args.gguf).stem if args.model == "default" else args.model), None


def sequences(gguf: Path, args: argparse.Namespace) -> int:
    """Resident conversations: as many `--ctx` sequences as `--cache-mb` holds, and at least `--parallel`."""
    per_sequence = Engine.kv_bytes_per_token(gguf) * args.ctx
    fits = (args.cache_mb * 1024 * 1024) // max(1, per_sequence)
    return int(max(args.parallel, min(MAX_SEQUENCES, int(fits))))


def fast_weights(gguf: Path, threads: int) -> bool:
    """The throughput mode's repacked weights, where a check in a child process found they run."""
    why = repacking_fails(gguf, threads)
    if why is not None:
        print(f"repacked weights are off: {why}; serving with plain weights", file=sys.stderr, flush=True)
    return why is None


def mode(gguf: Path, args: argparse.Namespace) -> Mode:
    """The serving mode the flags ask for; the engine is loaded for it, and the server reads it from there."""
    if args.throughput:
        return Throughput(args.chunk or BATCH, repacked=fast_weights(gguf, args.threads))
    chunk = args.chunk or CHUNK
    return BatchInvariant(chunk, granularity=chunk)  # the granularity and decode rows are measured once loaded


def load(args: argparse.Namespace) -> LlamaBackend:
    name, spec = choose(args)
    gguf = locate(spec, args.gguf) if spec is not None else locate(model_spec("smollm2-135m-instruct"), args.gguf)
    count = args.parallel if args.no_prompt_cache else sequences(gguf, args)
    print(f"loading {name} from {gguf} ({count} sequences of {args.ctx} tokens)", file=sys.stderr, flush=True)
    engine = Engine(gguf, context=args.ctx, threads=args.threads, sequences=count, batch=BATCH, mode=mode(gguf, args))
    facts = ModelFacts(name, str(gguf), gguf.stat().st_size, file_sha256(gguf, "hashing the model file"))
    options = Options(
        parallel=args.parallel,
        jump_forward=not args.no_jump_forward,
        prompt_cache=not args.no_prompt_cache,
        compile_timeout_s=args.grammar_timeout,
        draft=args.draft,
    )
    return LlamaBackend(engine, facts, options, say=lambda line: print(line, file=sys.stderr, flush=True))


def main(argv: list[str] | None = None) -> int:
    top = parser()
    args = top.parse_args(argv)
    if args.chunk is not None and not 1 <= args.chunk <= BATCH:
        top.error(f"--chunk must be 1 to {BATCH}")
    if not 0 <= args.draft < BATCH:
        top.error(f"--draft must be 0 to {BATCH - 1}")
    try:
        backend = load(args)
    except (ModelsError, EngineError) as exc:
        print(f"serve.llama: {exc}", file=sys.stderr)
        return 2
    print(
        f"serving {backend.facts.name} ({backend.engine.quantisation}) on http://{args.host}:{args.port}/v1 "
        f"(context {backend.engine.context}, {backend.engine.threads} threads, {args.parallel} in parallel, "
        f"{backend.mode.name})",
        file=sys.stderr,
        flush=True,
    )
    if backend.invariance is not None:
        print(f"batch invariance: {backend.invariance.describe()}", file=sys.stderr, flush=True)
    try:
        run_server(create_app(backend, BodyLimits(int(args.max_body_mb * 1_000_000))), args.host, args.port, args.quiet)
    finally:
        backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
