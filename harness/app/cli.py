"""harness: run an agent over a workspace, resume it, show it.

    harness run PROMPT --model NAME --workspace DIR [--base-url URL] [limits] [controls] [--json]
    harness resume RUN_ID [--approve CALL_ID | --reject CALL_ID [--reason TEXT]] [limits] [--json]
    harness show RUN_ID [--json]

Endings and exit codes: completed 0, failed 1, max_turns_exceeded 3, budget_exceeded 4, interrupted 5
(usage, configuration and state-file errors exit 2; a fault of the harness itself exits 70). Resumable:
max_turns_exceeded, budget_exceeded and interrupted (raise the limit, approve or reject, and `harness
resume`); completed and failed are final. The budget is checked before each turn, so the last turn can
overshoot it by at most one turn's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

from harness.app.client import base_url_from_env
from harness.app.flags import add_controls, profile_from
from harness.app.otel import SpanTrace, from_environment
from harness.app.presets import load_presets, parse_preset
from harness.app.runtime import runnable, start
from harness.app.store import FileStore, check_run_id
from harness.app.summary import RunSummary, controls_of
from harness.app.trace import FanoutTrace, JsonlTrace
from harness.app.userfiles import check_appendable
from harness.core.approvals import approve, call_digest, pending_call, reject
from harness.core.config import ALL_TOOLS, LOOKING_TOOLS, RESEARCH_BUDGET_USD, RESEARCH_TURNS, CommandPreset, RunConfig
from harness.core.events import TraceEvent
from harness.core.limits import Limits, Prices
from harness.core.options import MAX_REPLY_TOKENS
from harness.core.state import RunState
from harness.errors import ConfigError, HarnessError, StateError
from harness.prompts import FOR_TOOLS
from wire.text import LONE_SURROGATE, for_terminal
from wire.types import ToolCall

EXIT_CODES = {"completed": 0, "failed": 1, "max_turns_exceeded": 3, "budget_exceeded": 4, "interrupted": 5}
EXIT_USAGE, EXIT_INTERNAL = 2, 70
DEADLINE_GRACE_S = 3.0
ACTIONS = ("run", "resume", "show")


def default_state_dir() -> str:
    """Where runs are saved unless told: the user's state folder ($XDG_STATE_HOME, else ~/.local/state), outside
    any workspace, so no run's tools can list, read or rewrite another run's records."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return str(Path(base) / "local-agent-stack" / "runs")


DEFAULT_STATE_DIR = default_state_dir()
TOOL_TABLE = f"""tools (the first seven unless --tools names others; --allow-writes adds write_file,
edit_file and append_file, a command preset run_command, --research-model research):
  list_files(path?,glob?,sort?)  read-only  the files and their sizes, largest (smallest, newest) first
  read_file(path,offset?,limit?) read-only  a text file, a window of numbered lines when long; binaries described
  search(pattern,path?,glob?,regex?) read-only  matching lines as path:line: text (RE2; .gitignore honoured)
  find_symbol(name)              read-only  where the code defines a name and which files use it (tree-sitter)
  project_info()                 read-only  the manifests' facts: name, version, license, dependencies, scripts
  count_lines(path,pattern?,regex?) read-only  a file's lines, or those holding a text
  repo_map(path?)                read-only  the files that matter most and what each defines, ranked
  delete_file(path)              write      needs approval
  write_file(path,content)       write      atomic; the folder must exist; needs approval unless --allow-writes
  edit_file(path,old_text,new_text) write  one exact replacement; old_text must occur once; approval as write_file
  append_file(path,content)      write      lines added at the end; the rest kept; approval as write_file
  scan_archive()                 read-only  a demonstration: slow (about 3 s), reports progress, stops on Ctrl-C
  research(question)             read-only  a sub-agent, own limits ({RESEARCH_TURNS} turns, ${RESEARCH_BUDGET_USD})
  run_command(command)           write      a preset named by --command/--trusted-command/--commands-file"""


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


def add_run(commands: Any) -> None:
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
    start.add_argument("--system", help="system prompt (default: the small-model prompt for the tools offered)")
    start.add_argument("--run-id", help="choose the run id (default: random); an existing run is never replaced")
    start.add_argument(
        "--tools",
        help=f"comma-separated tools to offer, of {', '.join(ALL_TOOLS)} (default: {', '.join(LOOKING_TOOLS)})",
    )
    add_limits(start, defaults=True)
    start.add_argument("--max-tokens", type=int, help=f"cap on each reply's tokens (default {MAX_REPLY_TOKENS})")
    start.add_argument("--request-timeout", type=float, default=120.0, help="seconds to wait for one reply")
    start.add_argument("--price-input", type=float, default=2.00, help="USD per million input tokens (default 2.00)")
    start.add_argument(
        "--price-output", type=float, default=12.00, help="USD per million output tokens (default 12.00)"
    )
    start.add_argument("--dedupe", action="store_true", help="reuse results of identical read-only calls")
    start.add_argument("--dedupe-all", action="store_true", help="UNSAFE: reuse results of identical writes too")
    start.add_argument("--tool-errors", choices=["text", "silent", "fatal"], default="text")
    start.add_argument(
        "--allow-writes", action="store_true", help="offer write_file, edit_file, append_file; no approval"
    )
    start.add_argument("--command", action="append", default=[], metavar="NAME=CMD", help="a preset (needs approval)")
    start.add_argument("--trusted-command", action="append", default=[], metavar="NAME=CMD", help="no approval")
    start.add_argument("--commands-file", help="TOML file of [commands.NAME] presets")
    start.add_argument("--research-model", help="model for the research sub-agent (default: --model)")
    add_controls(start)
    add_output(start)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="harness", description=__doc__, epilog=TOOL_TABLE, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = top.add_subparsers(dest="action", required=True, metavar="{run,resume,show}")
    add_run(commands)
    resume = commands.add_parser("resume", help="go on with a stopped or killed run")
    resume.add_argument("run_id")
    decision = resume.add_mutually_exclusive_group()
    decision.add_argument(
        "--approve",
        metavar="CALL_ID[@DIGEST]",
        help="let this pending call run (with the digest it was shown with: only if it is still that call)",
    )
    decision.add_argument("--reject", metavar="CALL_ID", help="refuse this pending call")
    resume.add_argument("--reason", help="why the call was refused (the model reads it)")
    add_limits(resume, defaults=False)
    add_output(resume)
    show = commands.add_parser("show", help="print a saved run")
    show.add_argument("run_id")
    show.add_argument("--state-dir", default=DEFAULT_STATE_DIR)
    show.add_argument("--json", action="store_true")
    return top


def presets_from(args: argparse.Namespace) -> tuple[CommandPreset, ...]:
    presets = [parse_preset(spec) for spec in args.command]
    presets += [parse_preset(spec, needs_approval=False) for spec in args.trusted_command]
    if args.commands_file:
        presets += load_presets(args.commands_file)
    return tuple(presets)


def tools_from(args: argparse.Namespace, presets: tuple[CommandPreset, ...]) -> tuple[str, ...]:
    """The tools named, or the looking tools and what the flags ask for."""
    if args.tools is not None:
        return tuple(name.strip() for name in args.tools.split(",") if name.strip())
    implied = {
        "write_file": args.allow_writes,
        "edit_file": args.allow_writes,
        "append_file": args.allow_writes,
        "run_command": bool(presets),
        "research": bool(args.research_model),
    }
    return (*LOOKING_TOOLS, *(name for name, wanted in implied.items() if wanted))


def config_from(args: argparse.Namespace) -> RunConfig:
    """What resume needs to rebuild the model and the tools; never the API key itself."""
    presets = presets_from(args)
    if not args.workspace.strip():
        raise ConfigError("--workspace is empty; name the folder the tools may touch (--workspace . for this one)")
    return RunConfig(
        base_url=base_url_from_env(args.base_url),
        model=args.model,
        workspace=str(Path(args.workspace).resolve()),
        api_key_env=args.api_key_env,
        tools=tools_from(args, presets),
        presets=presets,
        allow_writes=args.allow_writes,
        dedupe="all" if args.dedupe_all else "reads" if args.dedupe else "off",
        tool_errors=args.tool_errors,
        max_tokens=args.max_tokens,
        research_model=args.research_model,
        request_timeout_s=args.request_timeout,
        controls=profile_from(args),
        private=private_folders(args),
    )


def private_folders(args: argparse.Namespace) -> tuple[str, ...]:
    """The folders that hold this run's records (its state, its trace): no tool reaches them, even where they
    lie inside the workspace."""
    folders = [Path(args.state_dir).resolve()]
    if getattr(args, "trace", None):
        folders.append(Path(args.trace).resolve().parent)
    return tuple(dict.fromkeys(str(f) for f in folders))


class Console:
    """Live progress lines on stderr, from the same events the trace gets."""

    def __init__(self) -> None:
        self.began = time.monotonic()

    def write(self, event: TraceEvent) -> None:
        line = self.describe(event)
        if line:
            stamp = f"[t+{(time.monotonic() - self.began) * 1000:,.0f} ms]"
            print(f"{stamp} {for_terminal(line)}", file=sys.stderr, flush=True)

    @staticmethod
    def describe(event: TraceEvent) -> str | None:
        if event["type"] == "turn":
            tokens = f"{event['prompt_tokens']} in, {event['completion_tokens']} out"
            answer = " (answer turn)" if event.get("answer_turn") else ""
            return f"turn {event['turn']}: {tokens}, {event['latency_ms']:,.0f} ms{answer}"
        if event["type"] == "tool_start":
            return f"running {event['tool']} ({event['call_id']})"
        if event["type"] == "tool_progress":
            return f"progress: {event['label']}"
        if event["type"] == "approval_required":
            return f"approval required: {event['tool']} ({event['call_id']})"
        return None


def trace_path(store: FileStore, state: RunState, args: argparse.Namespace) -> Path:
    return check_appendable(args.trace or store.directory / f"{state.run_id}.trace.jsonl", "trace")


class Watchdog:
    """The deadline's last resort. `--timeout` presses Stop inside the run, which ends it at its next await;
    should anything keep the run from getting there (a blocking call, a thread asyncio waits for at exit),
    the process exits `DEADLINE_GRACE_S` after the deadline, with the state as its last step saved it."""

    def __init__(self, timeout_s: float | None, run_id: str, state_dir: str) -> None:
        self.timeout_s, self.run_id, self.state_dir = timeout_s, run_id, state_dir
        self.timer: threading.Timer | None = None

    def __enter__(self) -> Watchdog:
        if self.timeout_s is not None:
            self.timer = threading.Timer(self.timeout_s + DEADLINE_GRACE_S, self.fire)
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def fire(self) -> None:
        print(f"harness: the run did not stop within {DEADLINE_GRACE_S:g} s of its {self.timeout_s:g} s deadline; "
              "it ends here, its state saved as of its last step", file=sys.stderr, flush=True)  # fmt: skip
        print(f"resumable: harness resume {self.run_id} --state-dir {self.state_dir}", file=sys.stderr, flush=True)
        os._exit(EXIT_CODES["interrupted"])


def execute(state: RunState, store: FileStore, args: argparse.Namespace) -> int:
    """Drive the run within its deadline, report it, and only then send its spans."""
    spans = from_environment(state.config.model if state.config else "", args.trace_payloads)
    try:
        began = time.monotonic()
        with Watchdog(state.limits.timeout_s, state.run_id, args.state_dir):
            state = asyncio.run(drive(state, store, args, spans))
        return report(state, (time.monotonic() - began) * 1000, args.json, args.state_dir)
    finally:
        if spans is not None:
            spans.close()


async def drive(state: RunState, store: FileStore, args: argparse.Namespace, spans: SpanTrace | None) -> RunState:
    sink = JsonlTrace(trace_path(store, state, args))
    trace = FanoutTrace(sink, Console(), spans)
    loop = asyncio.get_running_loop()
    try:
        async with runnable(state, store=store, trace=trace, trace_payloads=args.trace_payloads) as run:
            print(f"controls: {controls_of(run.state)}", file=sys.stderr, flush=True)
            for signum, why in ((signal.SIGINT, "user pressed Ctrl-C"), (signal.SIGTERM, "terminated")):
                loop.add_signal_handler(signum, run.options.signal.set, why)
            return await run.run()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        sink.close()


def report(state: RunState, wall_ms: float, as_json: bool, state_dir: str) -> int:
    facts = RunSummary.of(state, wall_ms)
    if state.answer is not None:
        print(for_terminal(state.answer))
    line = (
        f"turns={state.turns} tools={len(state.tool_runs)} in={state.usage.prompt_tokens:,} "
        f"out={state.usage.completion_tokens:,} cost={state.usage.cost_text()} ms={wall_ms:,.0f} status={state.status}"
    )
    print(line, file=sys.stderr if as_json else sys.stdout)  # with --json, stdout ends with the JSON
    if state.status != "completed":
        print(f"reason: {state.reason}", file=sys.stderr)
    if state.resumable:
        hint = f"harness resume {state.run_id} --state-dir {state_dir}"
        if state.interruption and state.interruption.type == "approval" and state.interruption.call_id:
            waiting = state.interruption
            call = pending_call(state, waiting.call_id or "")
            print(f"pending: {waiting.tool}({json.dumps(waiting.args)}) call {waiting.call_id}", file=sys.stderr)
            hint += f" --approve {waiting.call_id}@{call_digest(call)}   (or --reject {waiting.call_id} --reason TEXT)"
        print(f"resumable: {hint}", file=sys.stderr)
    if as_json:
        print(json.dumps(facts.facts(), ensure_ascii=True))
    return EXIT_CODES[state.status]


def checked_question(prompt: str) -> str:
    """The question as asked: refused when empty, or when it is not valid UTF-8 (an argument the shell passed
    in another encoding reaches Python with its bad bytes as lone surrogates)."""
    if not prompt.strip():
        raise ConfigError('the question is empty: say what to ask, e.g. harness run "Where is the retry limit set?"')
    if LONE_SURROGATE.search(prompt):
        raise ConfigError("the question is not valid UTF-8: write it in UTF-8 (check the terminal's encoding)")
    return prompt


def command_run(args: argparse.Namespace) -> int:
    args.prompt = checked_question(args.prompt)
    store = FileStore(args.state_dir)
    limits = Limits(args.max_turns, args.max_budget_usd, args.max_tool_calls, args.timeout, args.context_tokens)
    run_id = check_run_id(args.run_id) if args.run_id else None
    state = start(
        args.prompt,
        config_from(args),
        limits=limits,
        prices=Prices(args.price_input, args.price_output),
        run_id=run_id,
        system=FOR_TOOLS if args.system is None else (args.system or None),
    )
    with store.lock(state.run_id):
        if store.exists(state.run_id):
            raise StateError(f"run {state.run_id} already exists in {store.directory}; resume it or choose another id")
        trace_path(store, state, args)  # a trace that cannot be used is refused before anything is saved
        store.save(state)
        return execute(state, store, args)


def apply_overrides(state: RunState, args: argparse.Namespace) -> None:
    """New limits for a resumed run, checked like new ones."""
    changes = {
        name: getattr(args, name)
        for name in ("max_turns", "max_budget_usd", "max_tool_calls", "context_tokens")
        if getattr(args, name) is not None
    }
    if args.timeout is not None:
        changes["timeout_s"] = args.timeout
    state.limits = Limits(**(vars(state.limits) | changes))


def command_resume(args: argparse.Namespace) -> int:
    store = FileStore(args.state_dir)
    with store.lock(args.run_id):
        state = store.load(args.run_id)
        if args.approve:
            call_id, _, digest = args.approve.partition("@")
            call = approve(state, call_id, digest or None)
            shown = f"{call['function']['name']}({call['function']['arguments']})"
            print(f"approved: {shown} call {call_id} (digest {call_digest(call)})", file=sys.stderr)
        elif args.reject:
            reject(state, args.reject, args.reason)
        apply_overrides(state, args)
        return execute(state, store, args)


def command_show(args: argparse.Namespace) -> int:
    state = FileStore(args.state_dir).load(args.run_id)
    if args.json:
        print(json.dumps(RunSummary.of(state, 0.0).facts() | {"messages": state.messages}, ensure_ascii=True))
        return 0
    for message in state.messages:
        asked = cast(list[ToolCall], message.get("tool_calls", []))
        calls = ", ".join(f"{c['function']['name']}({c['function']['arguments']}) [{c['id']}]" for c in asked)
        print(for_terminal(f"{message['role']:>9}: {message.get('content') or ''}{calls}"))
    print(f"status={state.status} reason={state.reason} turns={state.turns} cost={state.usage.cost_text()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in ACTIONS and argv[0] not in ("-h", "--help"):
        print(f"harness: error: {argv[0]!r} is not an action; use one of {', '.join(ACTIONS)} (harness --help)",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    args = parser().parse_args(argv)
    handlers = {"run": command_run, "resume": command_resume, "show": command_show}
    try:
        return handlers[args.action](args)
    except (HarnessError, ValueError) as exc:  # ValueError: a setting pydantic or a dataclass refused
        print(f"harness: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a fault of the harness: one sentence, never a traceback; the state is as last saved
        print(f"harness: internal error: {type(exc).__name__}: {exc} (the run's state is saved as it last was)",
              file=sys.stderr)  # fmt: skip
        return EXIT_INTERNAL
