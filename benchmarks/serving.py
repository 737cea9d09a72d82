"""The local model server against its peers, side by side in one run, as ratios.

Peers: direct llama-cpp-python (the same library in-process, no server), and llama.cpp's own llama-server
when `LLAMA_SERVER=/path/to/llama-server` is set (built from the same llama.cpp sources; see the README).
Same GGUF, same threads, requests interleaved so that drift hits every side alike. Nothing is asserted: the
the peer's figures are printed beside ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from evals.runner import EvalSettings, Provider, run_suite
from evals.servers import ServerFailed, ServerProcess, free_port
from evals.suite import DEFAULT_SUITE, load_suite
from harness.app.client import tls
from models.registry import QWEN_CODER_05, ModelSpec, model_spec
from models.weights import locate
from serve.llama.kernels import repacking_fails

THREADS, CTX, PARALLEL, REPEATS = 2, 4096, 4, 5
DRAFT = 3  # guessed tokens per check: a 4-row call, the cheapest multi-row call per row measured here
PATH = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "list_files",
            "description": "List the files in the workspace with their sizes in bytes.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
    {"type": "function", "function": {"name": "read_file", "description": "Read a text file.", "parameters": PATH}},
]
SYSTEM = "You answer questions about the files in a folder. Use the tools, then answer in one sentence."
LISTING = "access.log (90 bytes)\nerrors.log (393 bytes)\nnotes.txt (30 bytes)"
CONTENT = "2026-09-07 10:00:31 ERROR worker 7 timed out after 30000 ms\n" * 4
CALLS = [
    ("required", ("list_files", "{}", LISTING)),
    ("required", ("read_file", '{"path": "errors.log"}', CONTENT)),
    ("none", None),
]


@dataclass(frozen=True)
class Peer:
    name: str
    base_url: str
    model: str


class LlamaServer:
    """llama.cpp's llama-server on a free port: the same GGUF, threads and slots, greedy by request."""

    def __init__(self, binary: str, gguf: Path) -> None:
        self.port = free_port()
        self.command = [
            binary, "-m", str(gguf), "--host", "127.0.0.1", "--port", str(self.port), "-t", str(THREADS),
            "-tb", str(THREADS), "-c", str(CTX * PARALLEL), "-np", str(PARALLEL), "--jinja", "--no-webui",
        ]  # fmt: skip
        if repacking_fails(gguf, THREADS) is not None:  # where repacked weights crash, the peer goes without too
            self.command.append("--no-repack")
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Peer:
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not self.ready():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise ServerFailed(f"llama-server did not start: {' '.join(self.command)}")
            time.sleep(0.2)
        return Peer("llama-server", f"http://127.0.0.1:{self.port}/v1", "model")

    def ready(self) -> bool:
        try:
            url = f"http://127.0.0.1:{self.port}"
            return httpx.get(f"{url}/health", timeout=1, verify=tls(url)).status_code == 200
        except httpx.HTTPError:
            return False

    def __exit__(self, *_: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)


def post(peer: Peer, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    began = time.perf_counter()
    reply = httpx.post(f"{peer.base_url}/chat/completions", json={"model": peer.model, **body}, timeout=600)
    if reply.status_code != 200:
        raise ServerFailed(f"{peer.name} answered {reply.status_code}: {reply.text[:500]}")
    return dict(reply.json()), (time.perf_counter() - began) * 1000


def conversation(peer: Peer, question: str) -> dict[str, float]:
    """Three turns of a tool conversation (list, read, answer); where its time went, in ms.

    Each turn's transcript is the same for every peer (the calls below, not the peer's own), so the sides
    evaluate the same prompts; llama-server, for one, does not always call a tool when one is required.
    """
    messages: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    spent = {"wall": 0.0, "prefill": 0.0, "decode": 0.0, "cache": 0.0}
    for turn, (choice, call) in enumerate(CALLS):
        body = {"messages": messages, "tools": TOOLS, "tool_choice": choice, "max_tokens": 48, "temperature": 0}
        reply, wall = post(peer, body)
        timings = reply.get("timings") or {}
        spent["wall"] += wall
        spent["prefill"] += timings.get("prompt_ms", 0.0)
        spent["decode"] += timings.get("predicted_ms", 0.0)
        spent["cache"] += timings.get("cache_ms") or 0.0
        if call is not None:
            name, arguments, result = call
            function = {"name": name, "arguments": arguments}
            messages.append(
                {"role": "assistant", "tool_calls": [{"id": f"c{turn}", "type": "function", "function": function}]}
            )
            messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": result})
    spent["other"] = spent["wall"] - spent["prefill"] - spent["decode"] - spent["cache"]
    return spent


async def aggregate_rate(peer: Peer, concurrent: int) -> float:
    """Generated tokens per second with `concurrent` requests decoding at once."""
    async with httpx.AsyncClient(timeout=600) as http:

        async def one(index: int) -> int:
            body = {
                "model": peer.model,
                "messages": [{"role": "user", "content": f"Count from {index * 100} upwards, one number per line."}],
                "max_tokens": 96,
                "temperature": 0,
                "ignore_eos": True,
            }
            reply = await http.post(f"{peer.base_url}/chat/completions", json=body)
            return int(reply.json()["usage"]["completion_tokens"])

        await one(99)  # warm: the prompt's shared part is cached for every peer alike
        began = time.perf_counter()
        tokens = await asyncio.gather(*(one(i) for i in range(concurrent)))
        return sum(tokens) / (time.perf_counter() - began)


def tool_call_latency(peer: Peer) -> float:
    body = {
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What does notes.txt say?"}],
        "tools": TOOLS,
        "tool_choice": {"type": "function", "function": {"name": "read_file"}},
        "max_tokens": 48,
        "temperature": 0,
    }
    post(peer, body)  # the prompt is cached after this, so the figure is the reply itself
    return post(peer, body)[1]


def eval_wall(peer: Peer, concurrency: int) -> tuple[float, list[Any]]:
    suite = load_suite(DEFAULT_SUITE)
    settings = EvalSettings(concurrency=concurrency)
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as scratch:
        began = time.perf_counter()
        results = asyncio.run(
            run_suite(suite, [Provider(peer.name, peer.base_url, peer.model)], settings, Path(scratch), lambda _: None)
        )
        wall = time.perf_counter() - began
    return wall, [(r.task, r.answer, r.tool_runs) for r in results]


def median(values: list[float]) -> float:
    return statistics.median(values)


@contextmanager
def peers(spec: ModelSpec, gguf: Path) -> Iterator[dict[str, Peer]]:
    common = (
        "--model",
        spec.name,
        "--threads",
        str(THREADS),
        "--ctx",
        str(CTX),
        "--parallel",
        str(PARALLEL),
        "--quiet",
    )
    with ExitStack() as stack:
        found = {
            "ours": stack.enter_context(ServerProcess("serve.llama", *common, "--quiet")),
            "ours, no jump-forward": stack.enter_context(
                ServerProcess("serve.llama", *common, "--quiet", "--no-jump-forward")
            ),
            "ours, throughput": stack.enter_context(ServerProcess("serve.llama", *common, "--throughput")),
            "ours, drafting": stack.enter_context(ServerProcess("serve.llama", *common, "--draft", str(DRAFT))),
        }
        chosen = {name: Peer(name, server.base_url, spec.name) for name, server in found.items()}
        binary = os.environ.get("LLAMA_SERVER")
        if binary:
            chosen["llama-server"] = stack.enter_context(LlamaServer(binary, gguf))
        yield chosen


def main(model_name: str | None = None) -> list[str]:
    spec = model_spec(model_name or QWEN_CODER_05.name)  # the model asked for, fetched if missing; never another
    gguf = locate(spec)
    lines = [f"serving: {spec.name} ({gguf.name}), {THREADS} threads, {PARALLEL} slots of {CTX} tokens"]
    with peers(spec, gguf) as found:
        ours, peer = found["ours"], found.get("llama-server")
        sides = [ours, found["ours, throughput"]] + ([peer] if peer else [])
        lines += conversations(sides)
        lines += batching(sides)
        lines += jump_forward(ours, found["ours, no jump-forward"])
        lines += eval_concurrency(ours)
        lines += drafting(ours, found["ours, drafting"])
    if peer is None:
        lines.append("(set LLAMA_SERVER=/path/to/llama-server for llama.cpp's own server in the same run)")
    return lines


def conversations(sides: list[Peer]) -> list[str]:
    runs: dict[str, list[dict[str, float]]] = {side.name: [] for side in sides}
    for repeat in range(REPEATS + 1):  # interleaved; the first is a warm-up (shared prefix into every cache)
        for side in sides:
            spent = conversation(side, f"Which file mentions a timeout? (case {repeat})")
            if repeat:
                runs[side.name].append(spent)
    lines = ["3-turn tool conversation: where the time goes (medians of 5, ms)"]
    for name, measured in runs.items():
        parts = {key: median([s[key] for s in measured]) for key in ("wall", "prefill", "decode", "cache", "other")}
        lines.append(
            f"  {name:<14} wall {parts['wall']:7,.0f}  prefill {parts['prefill']:7,.0f}  decode {parts['decode']:6,.0f}"
            f"  cache moves {parts['cache']:5,.0f}  HTTP+Python {parts['other']:5,.0f}"
        )
    theirs = runs.pop("llama-server", None)
    for name, ours in runs.items():
        if theirs is not None:
            pairs = list(zip(ours, theirs, strict=True))
            wall = median([o["wall"] / t["wall"] for o, t in pairs])
            prefill = median([o["prefill"] / t["prefill"] for o, t in pairs if t["prefill"]] or [float("nan")])
            lines.append(f"  {name} / llama-server: wall-clock {wall:.2f}x, prompt reading {prefill:.2f}x")
    return lines


def batching(sides: list[Peer]) -> list[str]:
    """Every peer measured at 1, 2 and 4 in each round, so a noisy minute hits them all alike."""
    counts = (1, 2, 4)
    measured: dict[str, dict[int, list[float]]] = {side.name: {n: [] for n in counts} for side in sides}
    for _ in range(3):
        for side in sides:
            for n in counts:
                measured[side.name][n].append(asyncio.run(aggregate_rate(side, n)))
    lines = ["aggregate decode with N requests at once (tokens/s, medians of 3 interleaved rounds)"]
    rates = {name: {n: median(values) for n, values in by_count.items()} for name, by_count in measured.items()}
    for name, rate in rates.items():
        cells = "  ".join(f"{n}: {rate[n]:6.1f}" for n in counts)
        lines.append(f"  {name:<14} {cells}   4 vs 1: {rate[4] / rate[1]:.2f}x")
    theirs = rates.get("llama-server")
    for name, rate in rates.items():
        if theirs is not None and name != "llama-server":
            cells = ", ".join(f"at {n}: {rate[n] / theirs[n]:.2f}x" for n in counts)
            lines.append(f"  {name} / llama-server {cells}")
    return lines


def jump_forward(on: Peer, off: Peer) -> list[str]:
    pairs = [(tool_call_latency(on), tool_call_latency(off)) for _ in range(REPEATS)]
    ratio = median([a / b for a, b in pairs])
    return [
        "tool-call reply latency (read_file forced; ms, medians of 5 interleaved)",
        f"  jump-forward on {median([a for a, _ in pairs]):6,.0f}   off {median([b for _, b in pairs]):6,.0f}"
        f"   ratio {ratio:.2f}x",
    ]


def eval_concurrency(ours: Peer) -> list[str]:
    before = model_seconds(ours)
    sequential, answers_1 = eval_wall(ours, 1)
    prompt, generating = (after - start for after, start in zip(model_seconds(ours), before, strict=True))
    together, answers_4 = eval_wall(ours, 4)
    same = "the same answers and tool runs" if answers_1 == answers_4 else "DIFFERENT answers"
    return [
        "six-task eval on the real model, default controls",
        f"  concurrency 1 {sequential:6.1f} s   concurrency 4 {together:6.1f} s   ratio {together / sequential:.2f}x"
        f", {same}",
        f"  at concurrency 1 the model spent {prompt:5.1f} s reading prompts and {generating:5.1f} s generating;"
        " reading is compute-bound and does not overlap, so concurrency can only shorten the second part",
    ]


def drafting(plain: Peer, drafted: Peer) -> list[str]:
    """The six-task eval with and without prompt-lookup drafting, one after the other: how many guesses the
    model confirmed, and what the generation time and the whole run came to."""
    measured = {}
    for peer in (plain, drafted):
        before = model_seconds(peer)[1]
        wall, answers = eval_wall(peer, 1)
        measured[peer.name] = (wall, model_seconds(peer)[1] - before, answers)
    guessed, kept = draft_counts(drafted)
    (wall_off, generating_off, answers_off), (wall_on, generating_on, answers_on) = measured.values()
    same = "the same answers and tool runs" if answers_off == answers_on else "DIFFERENT answers or tool runs"
    return [
        f"prompt-lookup drafting ({DRAFT} guessed tokens per check) on the six-task eval",
        f"  the model confirmed {kept:,.0f} of {guessed:,.0f} guessed tokens ({kept / max(guessed, 1):.0%});"
        f" generation {generating_on:5.1f} s against {generating_off:5.1f} s without"
        f" ({generating_on / max(generating_off, 1e-9):.2f}x), the whole eval {wall_on / wall_off:.2f}x, {same}",
    ]


def metric_totals(peer: Peer, *names: str) -> tuple[float, ...]:
    """The server's running totals of these unlabelled Prometheus counters (0 for one it does not have)."""
    text = httpx.get(peer.base_url.removesuffix("/v1") + "/metrics", timeout=30).text
    totals = dict(line.split() for line in text.splitlines() if line.split(" ", 1)[0] in names)
    return tuple(float(totals.get(name, 0)) for name in names)


def draft_counts(peer: Peer) -> tuple[float, ...]:
    """Drafted and confirmed tokens so far."""
    return metric_totals(peer, "draft_tokens_total", "draft_accepted_tokens_total")


def model_seconds(peer: Peer) -> tuple[float, ...]:
    """Seconds spent reading prompts and generating so far."""
    return metric_totals(peer, "prompt_seconds_total", "predicted_seconds_total")


LONG_LINES = 180  # about 3,900 tokens a prompt: two fill most of two of the 4,096-token slots
SHORT: dict[str, Any] = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}
DECODING: dict[str, Any] = {
    "messages": [{"role": "user", "content": "Count from 1 upwards, one number per line."}],
    "max_tokens": 1536,
    "ignore_eos": True,
}


def reading(tag: str) -> dict[str, Any]:
    lines = "\n".join(f"{tag} {i}: worker {i % 17} finished batch {i * 7} in {i % 90} ms" for i in range(LONG_LINES))
    return {"messages": [{"role": "user", "content": f"{lines}\nWhich worker was slowest?"}], "max_tokens": 4}


async def streamed(http: httpx.AsyncClient, peer: Peer, body: dict[str, Any], times: list[float]) -> str:
    """The reply's text; `times` gets the arrival time of each piece of it."""
    parts: list[str] = []
    request = {"model": peer.model, "temperature": 0, "stream": True, **body}
    async with http.stream("POST", f"{peer.base_url}/chat/completions", json=request) as response:
        if response.status_code != 200:
            raise ServerFailed(f"{peer.name} answered {response.status_code}: {(await response.aread())[:300]!r}")
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices") or []:
                if piece := (choice.get("delta") or {}).get("content"):
                    times.append(time.perf_counter())
                    parts.append(piece)
    return "".join(parts)


async def first_piece(http: httpx.AsyncClient, peer: Peer, body: dict[str, Any]) -> tuple[float, str]:
    times: list[float] = []
    began = time.perf_counter()
    text = await streamed(http, peer, body, times)
    return (times[0] - began if times else float("nan")), text


async def contended(peer: Peer) -> dict[str, float | bool]:
    """A short request's first piece and a decoding request's pace, alone and while two long prompts are
    read; and whether every reply is the one it gets alone."""
    long = [reading("job"), reading("task")]
    async with httpx.AsyncClient(timeout=900) as http:
        await first_piece(http, peer, SHORT)  # its prompt is then cached, as it is when asked again below
        short_alone, short_text = await first_piece(http, peer, SHORT)
        alone_times: list[float] = []
        decoded = await streamed(http, peer, {**DECODING, "max_tokens": 128}, alone_times)
        pace_alone = (len(alone_times) - 1) / (alone_times[-1] - alone_times[0])
        times: list[float] = []
        decoding = asyncio.create_task(streamed(http, peer, DECODING, times))
        while len(times) < 8 and not decoding.done():
            await asyncio.sleep(0.05)
        if decoding.done():  # it ended or failed before it got going: its error, not a wait without end
            await decoding
            raise ServerFailed(f"{peer.name} ended a {DECODING['max_tokens']}-token reply after {len(times)} pieces")
        sent = time.perf_counter()
        readers = [asyncio.create_task(streamed(http, peer, body, [])) for body in long]
        await asyncio.sleep(0.5)  # the long prompts are being read
        short_together, short_again = await first_piece(http, peer, SHORT)
        read_together = await asyncio.gather(*readers)
        done = time.perf_counter()
        decoded_together = await decoding
        read_alone = [await streamed(http, peer, body, []) for body in long]  # after: the cache helps these only
    end = min(done, times[-1])
    pace_together = sum(sent <= t <= end for t in times) / max(end - sent, 1e-9)
    after = [t for t in times if t > done + 0.5]  # the same reply, alone again, further on
    if len(after) > 32:
        pace_alone = (len(after) - 1) / (after[-1] - after[0])
    same = short_again == short_text and read_together == read_alone and decoded_together.startswith(decoded)
    return {"first": short_together / short_alone, "pace": pace_together / pace_alone, "same": same}


def contention_main(model_name: str | None = None) -> list[str]:
    spec = model_spec(model_name or QWEN_CODER_05.name)
    gguf = locate(spec)
    with peers(spec, gguf) as found:
        return contention([found[name] for name in ("ours", "ours, throughput", "llama-server") if name in found])


def contention(sides: list[Peer]) -> list[str]:
    lines = [
        f"two ~3,900-token prompts read while a request decodes and a short one arrives (ratios to each alone;"
        f" {LONG_LINES} log lines each)"
    ]
    for side in sides:
        try:
            found = asyncio.run(contended(side))
        except (httpx.HTTPError, ServerFailed) as exc:  # a peer that falls over is a finding, not the end of the run
            lines.append(f"  {side.name:<14} could not be measured: {type(exc).__name__}: {exc}")
            continue
        same = "every reply the one it gets alone" if found["same"] else "some replies differ from alone"
        lines.append(
            f"  {side.name:<14} short request's first token {found['first']:5.2f}x its time alone;"
            f" decoding pace {found['pace']:4.2f}x alone; {same}"
        )
    return lines
