"""The JSONL trace: a line per event, whole even when threads write at once, ASCII on disk, read back up to a
line a live writer has not finished, and a close that never raises."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from harness.app.trace import FanoutTrace, JsonlTrace, MemoryTrace, read_trace
from harness.core.events import ToolProgressEvent, TraceEvent


def progress(seq: int, label: str = "reading") -> ToolProgressEvent:
    return {"run_id": "r1", "seq": seq, "ts": 1.5, "type": "tool_progress", "tool": "search", "call_id": "c1",
            "label": label}  # fmt: skip


def test_each_event_is_one_ascii_line_appended_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace = JsonlTrace(path)
    trace.write(progress(1, "café ☕\nnext"))
    trace.close()
    JsonlTrace(path).write(progress(2))  # a resumed run appends to the same file
    raw = path.read_bytes()
    assert raw.isascii() and raw.count(b"\n") == 2
    assert [e["seq"] for e in read_trace(path)] == [1, 2]
    assert read_trace(path)[0]["label"] == "café ☕\nnext"


def test_a_line_a_killed_writer_left_half_written_ends_the_reading(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(progress(1)) + "\n" + json.dumps(progress(2))[:20])
    assert [e["seq"] for e in read_trace(path)] == [1]
    assert read_trace(tmp_path / "none.jsonl") == []


def test_threads_writing_at_once_leave_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace = JsonlTrace(path)
    label = "x" * 5000  # longer than one buffered write

    def write_many(start: int) -> None:
        for seq in range(start, start + 50):
            trace.write(progress(seq, label))

    threads = [threading.Thread(target=write_many, args=(n * 100,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    trace.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 200 and all(json.loads(line)["label"] == label for line in lines)


def test_closing_a_trace_that_never_wrote_or_twice_is_harmless(tmp_path: Path) -> None:
    trace = JsonlTrace(tmp_path / "never.jsonl")
    trace.close()
    trace.close()
    assert not (tmp_path / "never.jsonl").exists()


def test_fanout_writes_every_event_to_every_sink_it_was_given() -> None:
    first, second = MemoryTrace(), MemoryTrace()
    fanout = FanoutTrace(first, None, second)
    events: list[TraceEvent] = [progress(1), progress(2)]
    for event in events:
        fanout.write(event)
    assert first.events == second.events == [dict(e) for e in events]
    assert [e["seq"] for e in first.of("tool_progress")] == [1, 2] and first.of("turn") == []
