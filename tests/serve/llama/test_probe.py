"""The start-up probe, against engines whose kernels differ in known ways, and on the real SmolLM2 GGUF.

A fake engine at the probe's engine seam stands in for a CPU: its logits are a function of the sequence's
tokens, off by a little wherever its "kernel" for a row differs from the whole chunk's, and a cell written
by a row that was off makes every later row of that sequence off too (as a wrong cell does). Each kernel
below is one a real machine may have; the probe must never answer a size or a group that computes any row
differently, wherever that row is."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from serve.llama.engine import Engine, Row
from serve.llama.modes import call_sizes
from serve.llama.probe import measure, read_saved, remembered

CHUNK = 64


@dataclass(frozen=True)
class Shape:
    """Where a row was computed: its call's size, its index in the call, its position, and how many sequences
    the call held."""

    rows: int
    index: int
    position: int
    sequences: int


Kernel = Callable[[Shape], bool]  # whether the row's numbers are the whole chunk's


def every_call(shape: Shape) -> bool:
    return True


@dataclass
class KernelEngine:
    kernel: Kernel = every_call
    context: int = 1024
    sequences: int = 4
    batch_size: int = 512
    threads: int = 2
    build: str = "fake kernels"
    cells: dict[int, dict[int, tuple[int, bool]]] = field(default_factory=dict)  # position -> (token, exact)
    out: list[npt.NDArray[np.float32]] = field(default_factory=list)
    calls: int = 0

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        return [ord(c) % 97 for c in text]

    def decode(self, rows: Sequence[Row]) -> None:
        assert 0 < len(rows) <= self.batch_size
        self.calls += 1
        self.out = []
        sequences = len({r.sequence for r in rows})
        for index, row in enumerate(rows):
            held = self.cells.setdefault(row.sequence, {})
            assert row.position == len(held), "positions of a sequence must follow on"
            exact = self.kernel(Shape(len(rows), index, row.position, sequences)) and all(e for _, e in held.values())
            held[row.position] = (row.token, exact)
            if row.logits:
                history = [held[p][0] for p in range(row.position + 1)]
                scores = np.array([sum(history) % 7, len(history), history[-1]], dtype=np.float32)
                self.out.append(scores if exact else scores + np.float32(0.5))

    def logits(self, index: int) -> npt.NDArray[np.float32]:
        return self.out[index]

    def keep(self, sequence: int, length: int) -> None:
        held = self.cells.setdefault(sequence, {})
        for position in [p for p in held if p >= length]:
            del held[position]

    def copy(self, source: int, target: int) -> None:
        self.cells[target] = dict(self.cells.get(source, {}))


KERNELS: dict[str, tuple[Kernel, int]] = {  # a machine's kernels, and the granularity the probe must answer
    "every size alike": (every_call, 1),
    "one row differs": (lambda s: s.rows > 1, 2),
    "under 8 rows differs": (lambda s: s.rows >= 8, 8),
    # what fooled a probe that looked at half of one chunk: one-row calls agree while few cells come before
    "one row differs past 16 cells": (lambda s: s.rows > 1 or s.position < 16, 2),
    "one row differs past 256 cells": (lambda s: s.rows > 1 or s.position < 256, 2),
    "a call's last rows differ under 16 rows": (lambda s: s.rows >= 16 or s.index < s.rows - 1, 16),
    "rows past index 3 differ in calls under 32": (lambda s: s.rows >= 32 or s.index < 4, 32),
    "nothing but the chunk": (lambda s: s.rows == CHUNK, CHUNK),
}


@pytest.mark.parametrize("name", KERNELS)
def test_the_granularity_is_the_smallest_size_from_which_every_row_matches(name: str) -> None:
    kernel, granularity = KERNELS[name]
    engine = KernelEngine(kernel)
    found = measure(engine, CHUNK, decode_rows=4)
    assert found.granularity == granularity
    assert all(not held for held in engine.cells.values()), "the probe leaves every sequence it used empty"


def test_a_chunk_that_cannot_be_read_twice_over_in_the_context_leaves_the_granularity_at_the_chunk() -> None:
    assert measure(KernelEngine(context=100), CHUNK, decode_rows=4).granularity == CHUNK
    short = KernelEngine(lambda s: s.rows > 1 or s.position < 256, context=200)  # only the second chunk fits
    assert measure(short, CHUNK, decode_rows=4).granularity == 1  # what it measured: rows there all match


DECODE_KERNELS: dict[str, tuple[Kernel, int]] = {
    "shared calls alike": (every_call, 4),
    "two sequences differ": (lambda s: s.sequences == 1, 1),
    "three or more differ": (lambda s: s.sequences < 3, 2),
    "four differ where one sequence is past 200 cells": (lambda s: s.sequences < 4 or s.position < 200, 3),
}


@pytest.mark.parametrize("name", DECODE_KERNELS)
def test_decode_rows_share_a_call_only_as_far_as_every_row_matched_its_step_alone(name: str) -> None:
    kernel, rows = DECODE_KERNELS[name]
    engine = KernelEngine(kernel)
    assert measure(engine, CHUNK, decode_rows=4).decode_rows == rows
    assert all(not held for held in engine.cells.values())


def test_one_sequence_shares_no_decode_call_and_is_enough_to_measure_the_granularity() -> None:
    found = measure(KernelEngine(lambda s: s.rows > 1, sequences=1), CHUNK, decode_rows=4)
    assert (found.granularity, found.decode_rows) == (2, 1)


def answer_file(store: Path) -> Path:
    [path] = store.glob("*.json")
    return path


def test_the_answer_is_remembered_and_read_back_only_whole_and_unchanged(tmp_path: Path) -> None:
    engine = KernelEngine(lambda s: s.rows >= 8)
    first = remembered(engine, CHUNK, 4, "a" * 64, tmp_path)
    assert (first.granularity, first.remembered) == (8, False)
    calls = engine.calls
    again = remembered(engine, CHUNK, 4, "a" * 64, tmp_path)
    assert (again.granularity, again.decode_rows, again.remembered, engine.calls) == (8, 4, True, calls)
    path = answer_file(tmp_path)
    saved = json.loads(path.read_text())
    saved["answer"]["granularity"] = 1  # well formed, wrong, and the digest no longer matches
    path.write_text(json.dumps(saved))
    assert remembered(engine, CHUNK, 4, "a" * 64, tmp_path).remembered is False
    assert json.loads(path.read_text())["answer"]["granularity"] == 8  # measured again, written over
    other = remembered(engine, CHUNK, 4, "b" * 64, tmp_path)  # another model file: measured, its own file
    assert other.remembered is False and len(list(tmp_path.glob("*.json"))) == 2


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "huge", "not json", "a list", "other facts"])
def test_a_remembered_file_that_is_not_what_was_written_is_measured_again_without_blocking(
    tmp_path: Path, kind: str
) -> None:
    engine = KernelEngine(lambda s: s.rows > 1)
    remembered(engine, CHUNK, 4, "a" * 64, tmp_path)
    path = answer_file(tmp_path)
    saved = json.loads(path.read_text())
    facts = dict(saved["facts"])
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "huge":
        path.write_text(json.dumps(saved) + " " * 10_000)
    elif kind == "not json":
        path.write_text("{")
    elif kind == "a list":
        path.write_text("[]")
    else:
        saved["facts"]["threads"] = 99
        path.write_text(json.dumps(saved))
    assert read_saved(path, facts) is None
    found = remembered(engine, CHUNK, 4, "a" * 64, tmp_path)
    assert found.remembered is False and found.granularity == 2
    assert read_saved(path, facts) is not None  # the measurement was written in the place of what was there


def test_on_the_real_model_the_probe_answers_a_call_size_and_leaves_its_sequence_empty(
    smollm2_engine: Engine,
) -> None:
    """What the answer is depends on the CPU; that it is a size the plan uses, and that the sequence is left
    empty, does not (the replies it promises are checked end to end in test_llama)."""
    found = measure(smollm2_engine, 16, decode_rows=4)
    assert found.granularity in call_sizes(16) and found.decode_rows == 1  # one sequence: nothing shared
    smollm2_engine.decode([Row(1, 0, 0)])  # position 0 is free again
    smollm2_engine.keep(0, 0)
