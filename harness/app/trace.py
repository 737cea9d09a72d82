"""The trace: one JSON object per line, with the run id, a sequence number and a timestamp on every line.

Vocabulary: turn, tool_start, tool_progress, tool_result, approval_required, run_stopped (and
context_trimmed when a context budget drops old turns). Tool arguments and outputs are written only
when the caller asks for payloads.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any, TextIO

from harness.core.events import TraceEvent
from harness.core.protocols import TraceSink

log = logging.getLogger(__name__)


class JsonlTrace:
    """Appends events to a file, flushed per line: a killed process leaves every line it wrote."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._handle: TextIO | None = None

    def write(self, event: TraceEvent) -> None:
        line = json.dumps(event, ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
        with self._lock:
            if self._handle is None:
                self._handle = self.path.open("a", encoding="ascii")
            self._handle.write(line)
            self._handle.flush()

    def close(self) -> None:
        """Close the file; a failure here (a full disk, say) is logged, never raised: a trace that cannot be
        written never changes how a run ends."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError as exc:
                log.warning("closing the trace %s failed (%s)", self.path, exc)


class MemoryTrace:
    """Keeps events in a list: for tests, experiments and the eval."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def write(self, event: TraceEvent) -> None:
        self.events.append(dict(event))

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The events of one type, as plain mappings (for reading fields in tests and reports)."""
        return [e for e in self.events if e["type"] == kind]


class FanoutTrace:
    """Writes each event to several sinks."""

    def __init__(self, *sinks: TraceSink | None) -> None:
        self.sinks = [s for s in sinks if s is not None]

    def write(self, event: TraceEvent) -> None:
        for sink in self.sinks:
            sink.write(event)


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The events in a trace file, up to a line a live writer has not finished yet (none if there is no file)."""
    events: list[dict[str, Any]] = []
    if not Path(path).exists():
        return events
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return events
