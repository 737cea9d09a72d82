"""harness: run an agent over a workspace, resume it, show it.

    harness run PROMPT --model NAME --workspace DIR [--base-url URL] [limits] [--json]
    harness resume RUN_ID [--approve CALL_ID | --reject CALL_ID [--reason TEXT]] [--json]
    harness show RUN_ID [--json]

Endings and exit codes: completed 0, failed 1, max_turns_exceeded 3, budget_exceeded 4, interrupted 5
(usage, configuration and state-file errors exit 2). Resumable: max_turns_exceeded, budget_exceeded and
interrupted (raise the limit, approve or reject, and `harness resume`); completed and failed are final.
The budget is checked before each turn, so the last turn can overshoot it by at most one turn's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

from harness.client import OpenAIClient, base_url_from_env
from harness.decisions import approve, reject
from harness.errors import HarnessError
from harness.limits import Limits, Prices
from harness.loop import run
from harness.options import RunOptions
from harness.policy import ToolErrorPolicy
from harness.state import RunState, new_run, pending
from harness.store import FileStore
from harness.tools.base import Registry
from harness.tools.catalogue import catalogue
from harness.tools.commands import CommandPreset, load_presets, parse_preset
from harness.tools.workspace import Workspace
from harness.trace import FanoutTrace, JsonlTrace
from wire.types import ToolCall

EXIT_CODES = {"completed": 0, "failed": 1, "max_turns_exceeded": 3, "budget_exceeded": 4, "interrupted": 5}
EXIT_USAGE = 2
DEFAULT_STATE_DIR = ".harness/runs"
SYSTEM_PROMPT = (
    "You are a careful assistant working in a folder of files. Use the tools to look before you answer. "
    "When you have the answer, reply in plain text without calling a tool."
)
TOOL_TABLE = """tools:
  list_files()             read-only  names and sizes of the files in the workspace
  read_file(path)          read-only  a text file's content
  delete_file(path)        write      needs approval
  write_file(path,content) write      atomic; the folder must exist; needs approval unless --allow-writes
  scan_archive()           read-only  slow (about 3 s), reports progress, stops at once on Stop/Ctrl-C
  research(question)       read-only  a sub-agent with its own limits (6 turns, $0.05)
  run_command(command)     write      a preset named by --command/--trusted-command/--commands-file"""


def add_limits(parser: argparse.ArgumentParser, defaults: bool) -> None:
    default = (lambda value: value) if defaults else (lambda _: None)
    parser.add_argument("--max-turns", type=int, default=default(20), help="turn cap (default 20)")
    parser.add_argument("--max-budget-usd", type=float, default=None, help="stop once this much is spent")
    parser.add_argument("--max-tool-calls", type=int, default=None, help="cap on tool calls over the run")
    parser.add_argument("--timeout", type=float, default=None, help="wall-clock seconds for this invocation")
    parser.add_argument("--context-tokens", type=int, default=None, help="budget for what is sent per request")


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state-dir", default=DEFAULT_STATE_DIR, help=f"where runs are saved (default {DEFAULT_STATE_DIR})"
    )
    parser.add_argument("--trace", help="JSONL trace file (default: STATE_DIR/RUN_ID.trace.jsonl)")
    parser.add_argument("--trace-payloads", action="store_true", help="also trace tool arguments and outputs")
    parser.add_argument("--json", action="store_true", help="end stdout with one JSON object describing the run")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="harness", description=__doc__, epilog=TOOL_TABLE, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = top.add_subparsers(dest="action", required=True)
    start = commands.add_parser(
        "run", help="start a run", epilog=TOOL_TABLE, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    start.add_argument("prompt")
    start.add_argument(
        "--base-url", help="OpenAI-compatible endpoint (default $LLM_BASE_URL or http://127.0.0.1:8000/v1)"
    )
    start.add_argument("--model", required=True, help="the model (for the scripted provider: the scenario)")
    start.add_argument("--workspace", default=".", help="the folder the tools may touch (default: .)")
    start.add_argument("--api-key-env", default="LLM_API_KEY", help="environment variable holding the API key")
    start.add_argument("--system", default=SYSTEM_PROMPT, help="system prompt")
    start.add_argument("--run-id", help="choose the run id (default: random)")
    add_limits(start, defaults=True)
    start.add_argument("--max-tokens", type=int, help="cap on each reply's tokens")
    start.add_argument("--price-input", type=float, default=2.00, help="USD per million input tokens (default 2.00)")
    start.add_argument(
        "--price-output", type=float, default=12.00, help="USD per million output tokens (default 12.00)"
    )
    start.add_argument("--dedupe", action="store_true", help="reuse results of identical read-only calls")
    start.add_argument("--dedupe-all", action="store_true", help="UNSAFE: reuse results of identical writes too")
    start.add_argument(
        "--tool-errors", choices=["text", "silent", "fatal"], default="text", help="how tool errors reach the model"
    )
    start.add_argument("--allow-writes", action="store_true", help="write_file runs without approval")
    start.add_argument(
        "--command", action="append", default=[], metavar="NAME=CMD", help="a run_command preset (needs approval)"
    )
    start.add_argument(
        "--trusted-command", action="append", default=[], metavar="NAME=CMD", help="a preset that runs without approval"
    )
    start.add_argument("--commands-file", help="TOML file of [commands.NAME] presets")
    start.add_argument("--research-model", help="model for the research sub-agent (default: --model)")
    add_output(start)
    resume = commands.add_parser("resume", help="go on with a stopped or killed run")
    resume.add_argument("run_id")
    decision = resume.add_mutually_exclusive_group()
    decision.add_argument("--approve", metavar="CALL_ID", help="let this pending call run")
    decision.add_argument("--reject", metavar="CALL_ID", help="refuse this pending call")
    resume.add_argument("--reason", help="why the call was refused (the model reads it)")
    add_limits(resume, defaults=False)
    add_output(resume)
    show = commands.add_parser("show", help="print a saved run")
    show.add_argument("run_id")
    show.add_argument("--state-dir", default=DEFAULT_STATE_DIR)
    show.add_argument("--json", action="store_true")
    return top


def presets_from(args: argparse.Namespace) -> list[CommandPreset]:
    presets = [parse_preset(spec) for spec in args.command]
    presets += [parse_preset(spec, needs_approval=False) for spec in args.trusted_command]
    if args.commands_file:
        presets += load_presets(args.commands_file)
    return presets


def config_from(args: argparse.Namespace) -> dict[str, Any]:
    """What resume needs to rebuild the model and the tools; never the API key itself."""
    return {
        "base_url": base_url_from_env(args.base_url),
        "workspace": str(Path(args.workspace).resolve()),
        "api_key_env": args.api_key_env,
        "max_tokens": args.max_tokens,
        "dedupe": "all" if args.dedupe_all else "reads" if args.dedupe else "off",
        "tool_errors": args.tool_errors,
        "allow_writes": args.allow_writes,
        "research_model": args.research_model,
        "presets": [asdict(p) for p in presets_from(args)],
    }


class Console:
    """Live progress lines on stderr, from the same events the trace gets."""

    def __init__(self, quiet: bool) -> None:
        self.quiet, self.began = quiet, time.monotonic()

    def write(self, event: Mapping[str, Any]) -> None:
        line = self.describe(event)
        if line and not self.quiet:
            print(f"[t+{(time.monotonic() - self.began) * 1000:,.0f} ms] {line}", file=sys.stderr, flush=True)

    @staticmethod
    def describe(event: Mapping[str, Any]) -> str | None:
        kind = event["type"]
        if kind == "turn":
            tokens = f"{event['prompt_tokens']} in, {event['completion_tokens']} out"
            return f"turn {event['turn']}: {tokens}, {event['latency_ms']:,.0f} ms"
        if kind == "tool_start":
            return f"running {event['tool']} ({event['call_id']})"
        if kind == "tool_progress":
            return f"progress: {event['label']}"
        if kind == "approval_required":
            return f"approval required: {event['tool']} ({event['call_id']})"
        return None


def build(state: RunState, trace: Any) -> tuple[list[OpenAIClient], Registry, RunOptions]:
    config = state.config
    api_key = os.environ.get(config.get("api_key_env") or "LLM_API_KEY")
    client = OpenAIClient(config["base_url"], state.model, api_key=api_key)
    research = OpenAIClient(config["base_url"], config.get("research_model") or state.model, api_key=api_key)
    presets = [CommandPreset(**{**p, "argv": tuple(p["argv"])}) for p in config.get("presets", [])]
    tools = catalogue(
        Workspace(config["workspace"]),
        research_model=research,
        presets=presets,
        approve_writes=not config.get("allow_writes"),
        trace=trace,
    )
    options = RunOptions(
        model=client,
        trace=trace,
        errors=ToolErrorPolicy(mode=config.get("tool_errors", "text")),
        dedupe=config.get("dedupe", "off"),
        max_tokens=config.get("max_tokens"),
    )
    return [client, research], tools, options


async def drive(state: RunState, store: FileStore, args: argparse.Namespace) -> RunState:
    trace_path = args.trace or store.directory / f"{state.run_id}.trace.jsonl"
    sink = JsonlTrace(trace_path)
    trace = FanoutTrace(sink, Console(quiet=False))
    clients, tools, options = build(state, trace)
    options.store, options.trace_payloads = store, args.trace_payloads
    loop = asyncio.get_running_loop()
    for signum, why in ((signal.SIGINT, "user pressed Ctrl-C"), (signal.SIGTERM, "terminated")):
        loop.add_signal_handler(signum, options.signal.set, why)
    try:
        return await run(state, tools, options)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        for client in clients:
            await client.aclose()
        sink.close()


def summary(state: RunState, wall_ms: float) -> dict[str, Any]:
    return {
        "run_id": state.run_id,
        "status": state.status,
        "reason": state.reason,
        "resumable": state.resumable,
        "turns": state.turns,
        "tool_runs": state.tool_runs,
        "prompt_tokens": state.usage.prompt_tokens,
        "completion_tokens": state.usage.completion_tokens,
        "cost_usd": state.usage.cost_usd if state.usage.cost_known else None,
        "child_prompt_tokens": state.child_usage.prompt_tokens,
        "child_completion_tokens": state.child_usage.completion_tokens,
        "child_cost_usd": state.child_usage.cost_usd if state.child_usage.cost_known else None,
        "answer": state.answer,
        "interruption": asdict(state.interruption) if state.interruption else None,
        "pending": [c["id"] for c in pending(state.messages)],
        "wall_ms": round(wall_ms, 1),
    }


def report(state: RunState, wall_ms: float, as_json: bool, state_dir: str) -> int:
    facts = summary(state, wall_ms)
    if state.answer is not None:
        print(state.answer)
    line = (
        f"turns={state.turns} tools={len(state.tool_runs)} in={state.usage.prompt_tokens:,} "
        f"out={state.usage.completion_tokens:,} cost={state.usage.cost_text()} ms={wall_ms:,.0f} status={state.status}"
    )
    print(line, file=sys.stderr if as_json else sys.stdout)  # with --json, stdout ends with the JSON
    if state.status != "completed":
        print(f"reason: {state.reason}", file=sys.stderr)
    if state.resumable:
        hint = f"harness resume {state.run_id} --state-dir {state_dir}"
        if state.interruption and state.interruption.type == "approval":
            call = state.interruption
            print(f"pending: {call.tool}({json.dumps(call.args)}) call {call.call_id}", file=sys.stderr)
            hint += f" --approve {call.call_id}   (or --reject {call.call_id} --reason TEXT)"
        print(f"resumable: {hint}", file=sys.stderr)
    if as_json:
        print(json.dumps(facts, ensure_ascii=False))
    return EXIT_CODES[state.status]


def command_run(args: argparse.Namespace) -> int:
    store = FileStore(args.state_dir)
    limits = Limits(args.max_turns, args.max_budget_usd, args.max_tool_calls, args.timeout, args.context_tokens)
    state = new_run(
        args.prompt,
        system=args.system,
        model=args.model,
        limits=limits,
        prices=Prices(args.price_input, args.price_output),
        run_id=args.run_id,
        config=config_from(args),
    )
    Workspace(state.config["workspace"])  # refuse a missing workspace before anything is saved
    with store.lock(state.run_id):
        store.save(state)
        began = time.monotonic()
        state = asyncio.run(drive(state, store, args))
    return report(state, (time.monotonic() - began) * 1000, args.json, args.state_dir)


def apply_overrides(state: RunState, args: argparse.Namespace) -> None:
    for name in ("max_turns", "max_budget_usd", "max_tool_calls", "context_tokens"):
        value = getattr(args, name)
        if value is not None:
            setattr(state.limits, name, value)
    if args.timeout is not None:
        state.limits.timeout_s = args.timeout


def command_resume(args: argparse.Namespace) -> int:
    store = FileStore(args.state_dir)
    with store.lock(args.run_id):
        state = store.load(args.run_id)
        if args.approve:
            approve(state, args.approve)
        elif args.reject:
            reject(state, args.reject, args.reason)
        apply_overrides(state, args)
        began = time.monotonic()
        state = asyncio.run(drive(state, store, args))
    return report(state, (time.monotonic() - began) * 1000, args.json, args.state_dir)


def command_show(args: argparse.Namespace) -> int:
    state = FileStore(args.state_dir).load(args.run_id)
    if args.json:
        print(json.dumps(summary(state, 0.0) | {"messages": state.messages}, ensure_ascii=False))
        return 0
    for message in state.messages:
        asked = cast(list[ToolCall], message.get("tool_calls", []))
        calls = ", ".join(f"{c['function']['name']}({c['function']['arguments']}) [{c['id']}]" for c in asked)
        print(f"{message['role']:>9}: {message.get('content') or ''}{calls}")
    print(f"status={state.status} reason={state.reason} turns={state.turns} cost={state.usage.cost_text()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handlers = {"run": command_run, "resume": command_resume, "show": command_show}
    try:
        return handlers[args.action](args)
    except HarnessError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
