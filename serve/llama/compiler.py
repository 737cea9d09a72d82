"""A client's grammar or schema is compiled first where it cannot hurt the server: in a separate process.

llguidance recurses once per level of a grammar on the stack of the thread compiling it, so a long enough
chain of rules (about 3,000 on an 8 MB stack) overflows it and ends the process; converting GBNF to
Lark takes time that grows faster than the grammar. So every grammar that holds anything a client wrote
(a GBNF `grammar`, a response_format schema, tool schemas) is first:

1. bounded here, before any library sees it: at most MAX_GBNF_RULES rules, at most MAX_LARK_BYTES once
   converted (schemas are bounded by the serving core: depth, size, local references);
2. converted and compiled in the compile process, against the model's own vocabulary, on a thread whose
   stack is a quarter of the server's compile threads (so what passes there has four times the room
   here), within `timeout_s`. A crash or a timeout there is that request's 400; the process is started
   again for the next one.

Only a grammar that passed is compiled in the server, on threads with COMPILE_STACK_BYTES of stack.

The compile process is `python -m serve.llama.compiler GGUF`: JSON lines in on stdin, out on stdout.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from queue import SimpleQueue
from typing import IO, TypeVar

import llguidance
import llguidance.numpy
from llguidance.gbnf_to_lark import gbnf_to_lark

from serve.errors import InvalidRequest, Unavailable
from serve.llama.threads import start_thread

log = logging.getLogger(__name__)

MAX_GBNF_RULES = 1024
MAX_LARK_BYTES = 400_000
COMPILE_STACK_BYTES = 16 << 20  # the server's own compile threads and its scheduler thread
WORKER_STACK_BYTES = COMPILE_STACK_BYTES // 4
DEFAULT_TIMEOUT_S = 5.0
START_TIMEOUT_S = 120.0  # loading the vocabulary and building llguidance's view of it
READY = b"ready\n"


@dataclass(frozen=True)
class Compiled:
    lark: str  # the grammar as llguidance's Lark (a GBNF grammar converted)


def gbnf_rules(grammar: str) -> int:
    """How many rules a GBNF grammar defines (each is `name ::= ...`), counted without parsing it."""
    return grammar.count("::=")


class Compiler:
    """The compile process, started on first use and again after it dies; one grammar at a time."""

    def __init__(self, gguf: Path, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.gguf, self.timeout_s = gguf, timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()
        self.restarts = 0

    def start(self) -> None:
        with self.lock:
            self.ensure()

    def close(self) -> None:
        with self.lock:
            self.kill()

    # --- what the server asks ---------------------------------------------------------------------------
    def gbnf(self, grammar: str) -> Compiled:
        """A GBNF grammar converted to Lark and compiled; InvalidRequest says why it cannot be."""
        rules = gbnf_rules(grammar)
        if rules > MAX_GBNF_RULES:
            raise InvalidRequest(f"it has {rules:,} rules; at most {MAX_GBNF_RULES:,} are accepted")
        return self.ask("gbnf", grammar)

    def lark(self, grammar: str) -> Compiled:
        """A Lark grammar (with %json schemas in it) compiled; InvalidRequest says why it cannot be."""
        if len(grammar.encode()) > MAX_LARK_BYTES:
            raise InvalidRequest(f"it is over {MAX_LARK_BYTES:,} bytes as a grammar")
        return self.ask("lark", grammar)

    # --- the process ------------------------------------------------------------------------------------
    def ask(self, kind: str, text: str) -> Compiled:
        with self.lock:
            process = self.ensure()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(json.dumps({"kind": kind, "text": text}).encode() + b"\n")
                process.stdin.flush()
                line = read_line(process.stdout, self.timeout_s)
            except TimeoutError:
                self.kill()
                self.restarts += 1
                raise InvalidRequest(f"it did not compile within {self.timeout_s:g} s") from None
            except OSError:
                line = b""
            if not line:
                code = process.poll()
                self.kill()
                self.restarts += 1
                log.warning("the compile process ended (exit %s) on a %s grammar of %d bytes", code, kind, len(text))
                raise InvalidRequest("it made the grammar compiler fail (too deep or too large to compile)")
        answer = json.loads(line)
        if answer["problem"]:
            raise InvalidRequest(answer["problem"])
        return Compiled(answer["lark"])

    def ensure(self) -> subprocess.Popen[bytes]:
        if self.process is not None and self.process.poll() is None:
            return self.process
        process = subprocess.Popen(
            [sys.executable, "-m", "serve.llama.compiler", str(self.gguf)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        self.process = process
        try:
            ready = read_line(process.stdout, START_TIMEOUT_S)
        except TimeoutError:
            ready = b""
        if ready != READY:
            self.kill()
            raise Unavailable("the grammar compiler could not start; try again")
        return process

    def kill(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()


T = TypeVar("T")


class CompileThreads:
    """Threads with COMPILE_STACK_BYTES of stack for the server's own compiling, off the event loop."""

    def __init__(self, count: int = 2) -> None:
        self.jobs: SimpleQueue[tuple[Callable[[], object], Future[object]] | None] = SimpleQueue()
        self.threads = [start_thread(self.work, f"llama-compile-{i}", COMPILE_STACK_BYTES) for i in range(count)]

    def work(self) -> None:
        while (job := self.jobs.get()) is not None:
            task, future = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(task())
                except BaseException as exc:  # handed to the awaiting request, raised there
                    future.set_exception(exc)

    async def run(self, task: Callable[[], T]) -> T:
        future: Future[T] = Future()
        self.jobs.put((task, future))  # type: ignore[arg-type]
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        for _ in self.threads:
            self.jobs.put(None)


def read_line(stream: IO[bytes], timeout_s: float) -> bytes:
    """One line from a pipe within the time given (b"" if the other end closed)."""
    deadline, chunks = time.monotonic() + timeout_s, []
    descriptor = stream.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([descriptor], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(descriptor, 1 << 16)
        if not chunk:
            return b""
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)


# --- inside the compile process --------------------------------------------------------------------------
def compile_one(kind: str, text: str, tokenizer: llguidance.LLTokenizer) -> dict[str, str]:
    if kind == "gbnf":
        try:
            text = gbnf_to_lark(text)
        except Exception as exc:  # the converter raises plain exceptions of several kinds on bad input
            return {"lark": "", "problem": f"not a GBNF grammar this server can read: {exc}"}
        if len(text.encode()) > MAX_LARK_BYTES:
            return {"lark": "", "problem": f"it is over {MAX_LARK_BYTES:,} bytes once converted to Lark"}
    problem = llguidance.LLMatcher.validate_grammar(text, tokenizer)
    if not problem:  # compiled: now match with it once, as generation will
        matcher = llguidance.LLMatcher(tokenizer, text, log_level=0)
        mask = llguidance.numpy.allocate_token_bitmask(1, tokenizer.vocab_size)
        llguidance.numpy.fill_next_token_bitmask(matcher, mask, 0)
        problem = matcher.get_error() if matcher.is_error() else ""
    return {"lark": text, "problem": problem}


def serve(gguf: Path) -> None:
    from serve.llama.engine import vocabulary_tokenizer

    tokenizer = vocabulary_tokenizer(gguf)
    sys.stdout.buffer.write(READY)
    sys.stdout.buffer.flush()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        answer = compile_one(request["kind"], request["text"], tokenizer)
        sys.stdout.buffer.write(json.dumps(answer).encode() + b"\n")
        sys.stdout.buffer.flush()


def main() -> None:
    threading.stack_size(WORKER_STACK_BYTES)
    worker = threading.Thread(target=serve, args=(Path(sys.argv[1]),))
    worker.start()
    worker.join()


if __name__ == "__main__":
    main()
