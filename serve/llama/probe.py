"""Which calls compute a row exactly as a whole chunk does, measured on the loaded model at start.

The batch-invariant mode's promise (a request's greedy reply is the same alone, beside others, cached or
not) rests on two facts about llama.cpp's CPU kernels for this model, build and machine:

- prompt calls: which call sizes give every row the logits a whole chunk's call gives it. llama.cpp picks
  kernels by a call's rows (one row takes another matrix path than two or more; a tensor type may have a
  tiled kernel of its own), and a kernel that differs can still agree with the chunk at some positions
  (with few cells before them, often), so a few positions prove nothing;
- decode calls: how many rows of different requests one call may hold, each row's logits the ones it gets
  in a call alone.

How it is measured, and why that covers what the scheduler does. A prompt is read only in calls of the
chunk or of a power of two s dividing it, each starting at a multiple of s (`modes.BatchInvariant`), so
the row at position p is always row p mod s of its call, and the cells before a call were written by
such calls. For each size below the chunk, largest first, a chunk of a text is read again in calls of s
over the cells the whole chunks wrote, and every row's logits are compared bit for bit with the whole
chunk's: every row index a call of s can have. This is done on two texts of different tokens, in the
second chunk of one and, in the other, in a chunk past 256 cells (llama.cpp pads the span of cells a call
attends to to multiples of 256, so the two see spans of different lengths). A size that fails anywhere
rules out itself and every size below it; the granularity is the smallest size from which every size up
to the chunk passed. For decode calls, sequences of different lengths hold prefixes of a text; each takes
a step alone, then the first 2, 3, ... of them take the same step in one call, three steps per group,
every row compared with its step alone; `decode_rows` is the largest group every step of which matched.

What was not measured is not used: where the context has no room to read a chunk past the first, the
granularity is the chunk; a group size never tested is never used (one sequence: no group at all).

The answer is remembered in a small JSON file under the models cache, named and checked by the facts it
was measured under (this method's version, the model file's sha256, the chunk, the largest group asked,
threads, the llama.cpp build and the CPU) with a digest of facts and answer. It is read only when it is a
regular file of at most a few kilobytes, well formed, with the same facts and a matching digest; anything
else is measured again and written over.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from models.weights import write_atomic_text
from serve.llama.engine import Row
from serve.llama.modes import call_sizes
from serve.llama.scheduler import KVEngine

METHOD = 2  # the version of how this measures: an answer measured another way is measured again
SPAN = 256  # llama.cpp pads the cells a call attends to to a multiple of this
STEPS = 3  # decode steps per group size
MAX_FILE_BYTES = 4096
TEXTS = (
    "A folder of logs, notes and reports; count what each file says about errors, then answer. ",
    'def rotate(path: str, keep: int = 5) -> list[str]:\n    """Keep the newest logs."""\n'
    '    return sorted(glob(f"{path}.*"), key=os.path.getmtime)[-keep:]  # 2026-09-07 10:00:31\n',
)


class ProbeEngine(KVEngine, Protocol):
    @property
    def threads(self) -> int: ...

    @property
    def build(self) -> str: ...

    def tokenize(self, text: str, special: bool = True) -> list[int]: ...


@dataclass(frozen=True)
class Invariance:
    """What the probe found, and what finding it cost at start (0 when it was remembered)."""

    granularity: int
    decode_rows: int
    seconds: float = 0.0
    remembered: bool = False

    def describe(self) -> str:
        how = "remembered" if self.remembered else f"measured in {self.seconds:.1f} s"
        return f"prompt reuse granularity {self.granularity}, decode rows per call {self.decode_rows} ({how})"


def remembered(
    engine: ProbeEngine,
    chunk: int,
    decode_rows: int,
    model_sha256: str,
    store: Path,
    say: Callable[[str], object] = lambda line: None,
) -> Invariance:
    """`measure`, once per model file, chunk, group size asked, threads, llama.cpp build and CPU (`say` is told
    before a measurement starts)."""
    facts = {
        "method": METHOD,
        "model_sha256": model_sha256,
        "chunk": chunk,
        "decode_rows_asked": min(decode_rows, engine.sequences),
        "threads": engine.threads,
        "build": engine.build,
        "cpu": cpu_facts(),
    }
    path = store / f"{digest_of(facts)[:32]}.json"
    saved = read_saved(path, facts)
    if saved is not None:
        return saved
    say("batch invariance: measuring which calls compute a row as a whole chunk does (once per model and machine)")
    found = measure(engine, chunk, decode_rows)
    answer = {"granularity": found.granularity, "decode_rows": found.decode_rows, "seconds": found.seconds}
    with suppress(OSError):  # a read-only cache only costs the next start a measurement
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_text(path, json.dumps({"facts": facts, "answer": answer, "digest": digest_of([facts, answer])}))
    return found


def read_saved(path: Path, facts: dict[str, Any]) -> Invariance | None:
    """A remembered answer, if the file is a small regular file (opened without following a link or waiting on
    a pipe) holding exactly these facts, a valid answer and the digest of both."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        data = os.read(fd, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        saved = json.loads(data)
        answer = saved["answer"]
        granularity, rows, seconds = answer["granularity"], answer["decode_rows"], answer["seconds"]
        ok = saved["facts"] == facts and saved["digest"] == digest_of([facts, answer])
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    valid = (
        ok
        and type(granularity) is int
        and granularity in call_sizes(facts["chunk"])
        and type(rows) is int
        and 1 <= rows <= max(1, facts["decode_rows_asked"])
        and isinstance(seconds, (int, float))
    )
    return Invariance(granularity, rows, float(seconds), remembered=True) if valid else None


def digest_of(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def cpu_facts() -> str:
    """The CPU's model name and a digest of its feature flags (Linux), or the machine type elsewhere."""
    try:
        with open("/proc/cpuinfo", "rb") as handle:
            text = handle.read(1 << 16).decode("utf-8", errors="replace")
    except OSError:
        return os.uname().machine
    pairs = (line.split(":", 1) for line in text.split("\n\n", 1)[0].splitlines() if ":" in line)
    fields = {key.strip(): " ".join(value.split()) for key, value in pairs}
    name, flags = fields.get("model name", ""), fields.get("flags", "")
    return f"{os.uname().machine} {name}; flags {hashlib.sha256(flags.encode()).hexdigest()[:16]}"


def measure(engine: ProbeEngine, chunk: int, decode_rows: int) -> Invariance:
    """The granularity and the decode group size this engine computes exactly (see the module's docstring).
    Uses sequences from 0 up and leaves them empty."""
    began = time.perf_counter()
    groups = min(decode_rows, engine.sequences)
    try:
        granularity, tokens, held = prompt_granularity(engine, chunk)
        rows = decode_group(engine, tokens, held, groups) if held else 1
    finally:
        for sequence in range(max(1, groups)):
            engine.keep(sequence, 0)
    return Invariance(granularity, rows, round(time.perf_counter() - began, 3))


def trial_starts(context: int, chunk: int) -> list[int]:
    """Where the chunks read again begin: the second chunk, and the first chunk past SPAN cells that fits."""
    if 2 * chunk > context:
        return []
    far = max(2 * chunk, -(-SPAN // chunk) * chunk)
    return [chunk, far] if far + chunk <= context else [chunk]


def tokens_of(engine: ProbeEngine, text: str, length: int) -> list[int]:
    once = engine.tokenize(text)
    return (once * (length // max(1, len(once)) + 1))[:length]


def prompt_granularity(engine: ProbeEngine, chunk: int) -> tuple[int, list[int], int]:
    """The granularity; and the last text read, with how many of its leading cells sequence 0 holds as the
    whole chunks computed them (for the decode check)."""
    sizes = call_sizes(chunk)
    failed, tokens, held = 0, [], 0
    for text, start in zip(TEXTS, trial_starts(engine.context, chunk), strict=False):
        tokens = tokens_of(engine, text, start + chunk)
        expected = read_chunks(engine, tokens, start, chunk)
        for size in (s for s in sizes[1:] if s > failed):
            engine.keep(0, start)
            if not reads_alike(engine, tokens, start, size, expected):
                failed = size
                break
        engine.keep(0, start)
        held = start
    if not held:
        return chunk, [], 0
    return min(s for s in sizes if s > failed), tokens, held


def read_chunks(engine: ProbeEngine, tokens: list[int], start: int, chunk: int) -> list[bytes]:
    """Read the tokens from an empty sequence 0 in whole chunks; the digests of the logits of the chunk at `start`."""
    engine.keep(0, 0)
    expected: list[bytes] = []
    for first in range(0, start + chunk, chunk):
        engine.decode([Row(tokens[p], p, 0, logits=p >= start) for p in range(first, first + chunk)])
        if first == start:
            expected = [fingerprint(engine, i) for i in range(chunk)]
    return expected


def reads_alike(engine: ProbeEngine, tokens: list[int], start: int, size: int, expected: list[bytes]) -> bool:
    """Whether the chunk at `start`, read in calls of `size` rows, gives every row the whole chunk's logits."""
    for first in range(start, start + len(expected), size):
        engine.decode([Row(tokens[p], p, 0, logits=True) for p in range(first, first + size)])
        if any(fingerprint(engine, i) != expected[first - start + i] for i in range(size)):
            return False
    return True


def decode_group(engine: ProbeEngine, tokens: Sequence[int], held: int, most: int) -> int:
    """The largest number of sequences, up to `most`, whose decode rows in one call each get the logits they get
    in a call alone. Sequence 0 holds the first `held` cells of `tokens`; the others get shorter copies."""
    if most < 2 or held + STEPS * most >= engine.context:
        return 1
    lengths = [held - i * (held // most) for i in range(most)]
    for sequence in range(1, most):
        engine.copy(0, sequence)
        engine.keep(sequence, lengths[sequence])
    for group in range(2, most + 1):
        for _ in range(STEPS):
            rows = [Row(tokens[lengths[s] % len(tokens)], lengths[s], s, logits=True) for s in range(group)]
            alone = []
            for row in rows:
                engine.decode([row])
                alone.append(fingerprint(engine, 0))
                engine.keep(row.sequence, row.position)
            engine.decode(rows)
            if any(fingerprint(engine, i) != alone[i] for i in range(group)):
                return group - 1
            lengths[:group] = [n + 1 for n in lengths[:group]]
    return most


def fingerprint(engine: ProbeEngine, index: int) -> bytes:
    return hashlib.blake2b(engine.logits(index).tobytes(), digest_size=16).digest()
