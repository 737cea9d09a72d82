"""Where a run's facts go: the state (saved after every change) and the trace (one event per line)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from harness.core.events import ApprovalRequiredEvent, Header, ToolResultEvent, ToolStartEvent, TraceEvent
from harness.core.protocols import ModelReply, StateStore, ToolContext, TraceSink
from harness.core.state import Ending, Intent, Interruption, RunState, Status, pending
from harness.core.stop import StopSignal
from harness.prompts import stopped_first
from wire.types import Message, ToolCall

log = logging.getLogger(__name__)


class ChildSlot:
    """A sub-agent's run kept inside the parent's state under the call that started it (see ChildRuns)."""

    def __init__(self, journal: Journal, call_id: str) -> None:
        self.journal, self.call_id = journal, call_id

    def load(self) -> RunState | None:
        return self.journal.state.children.get(self.call_id)

    def save(self, state: RunState) -> None:
        self.journal.state.children[self.call_id] = state
        self.journal.save()


class Journal:
    def __init__(self, state: RunState, store: StateStore | None, trace: TraceSink | None, payloads: bool) -> None:
        self.state, self.store, self.trace, self.payloads = state, store, trace, payloads

    def save(self) -> None:
        if self.store is not None:
            self.store.save(self.state)

    def header(self) -> Header:
        run_id, seq, ts = self.stamp()
        return {"run_id": run_id, "seq": seq, "ts": ts}

    def stamp(self) -> tuple[str, int, float]:
        """The run id, the next sequence number and the time: what every trace line carries (and, for a
        sub-agent's run, the parent's call that started it, added as it is emitted)."""
        self.state.trace_seq += 1
        return self.state.run_id, self.state.trace_seq, round(time.time(), 6)

    def emit(self, event: TraceEvent) -> None:
        if self.trace is None:
            return
        if self.state.parent is not None:
            event["parent"] = {"run_id": self.state.parent.run_id, "call_id": self.state.parent.call_id}
        try:
            self.trace.write(event)
        except Exception as exc:  # a broken trace must never change how a run ends
            log.warning("trace sink failed (%s); the run goes on", exc)

    def tool_start(self, call: ToolCall, tool: str, args: dict[str, Any]) -> None:
        run_id, seq, ts = self.stamp()
        event: ToolStartEvent = {
            "run_id": run_id,
            "seq": seq,
            "ts": ts,
            "type": "tool_start",
            "tool": tool,
            "call_id": call["id"],
        }
        if self.payloads:
            event["args"] = args
        self.emit(event)

    def approval_required(self, call: ToolCall, tool: str, args: dict[str, Any], reason: str) -> None:
        run_id, seq, ts = self.stamp()
        event: ApprovalRequiredEvent = {
            "run_id": run_id,
            "seq": seq,
            "ts": ts,
            "type": "approval_required",
            "tool": tool,
            "call_id": call["id"],
            "reason": reason,
        }
        if self.payloads:
            event["args"] = args
        self.emit(event)

    def context_trimmed(self, dropped: int) -> None:
        self.emit({**self.header(), "type": "context_trimmed", "dropped_messages": dropped})

    def not_an_answer(self, why: str) -> None:
        """Saved with the event: the retry's counters (and a digest now due) survive a kill."""
        self.save_then_emit({**self.header(), "type": "not_an_answer", "turn": self.state.turns, "why": why})

    def append(self, message: Message) -> None:
        """A message the harness adds to the transcript itself (an answer turn's question, a re-ask)."""
        self.state.messages.append(message)
        self.save()

    def reply(self, reply: ModelReply, latency_ms: float, answer_turn: str | None = None) -> None:
        """Record a model reply: its cost counts the moment it arrives, then it joins the transcript."""
        state, usage = self.state, reply.usage
        cost = state.usage.add(usage, state.prices)
        state.turns += 1
        state.messages.append(reply.message)
        details = usage.prompt_tokens_details if usage else None
        self.save_then_emit(
            {
                **self.header(),
                "type": "turn",
                "turn": state.turns,
                "prompt_tokens": usage.prompt_tokens if usage else None,
                "completion_tokens": usage.completion_tokens if usage else None,
                "total_tokens": usage.total_tokens if usage else None,
                "cached_tokens": details.cached_tokens if details else None,
                "cost_usd": cost,
                "running_cost_usd": state.total_cost_usd,
                "finish": reply.finish_reason,
                "latency_ms": round(latency_ms, 3),
                "timings": reply.timings.record() if reply.timings else None,
                "answer_turn": answer_turn,
            }
        )

    def save_then_emit(self, event: TraceEvent) -> None:
        """The event's number is taken before the save, so a kill between the two leaves a gap, never a repeat."""
        self.save()
        self.emit(event)

    def answer(self, call: ToolCall, content: str, event: ToolResultEvent) -> None:
        """Fill a call's slot in the transcript; whatever the harness decided about a call is written here."""
        name = call["function"]["name"]
        self.state.messages.append({"role": "tool", "tool_call_id": call["id"], "name": name, "content": content})
        self.save_then_emit(event)

    def decided(self, call: ToolCall, content: str) -> None:
        """A slot filled without running the tool (an error, a refusal, a reused result); the loop goes on."""
        self.answer(call, content, self.tool_result(call, 0.0, ok=False, ran=False))

    def ran(self, call: ToolCall, args: dict[str, Any], output: str, ok: bool, ms: float) -> None:
        state, name = self.state, call["function"]["name"]
        state.tool_runs.append(f"{name}:{args['path']}" if isinstance(args.get("path"), str) else name)
        if call["id"] in state.started:
            state.started.remove(call["id"])
        state.processes.pop(call["id"], None)
        state.intents.pop(call["id"], None)
        self.answer(call, output, self.tool_result(call, ms, ok, ran=True, output=output))

    def tool_result(self, call: ToolCall, ms: float, ok: bool, ran: bool, output: str | None = None) -> ToolResultEvent:
        run_id, seq, ts = self.stamp()
        event: ToolResultEvent = {
            "run_id": run_id,
            "seq": seq,
            "ts": ts,
            "type": "tool_result",
            "tool": call["function"]["name"],
            "call_id": call["id"],
            "ms": round(ms, 3),
            "ok": ok,
            "ran": ran,
        }
        if self.payloads and output is not None:
            event["output"] = output
        return event

    def result_of(self, call_id: str) -> str:
        messages = self.state.messages
        return next(str(m["content"]) for m in messages if m["role"] == "tool" and m["tool_call_id"] == call_id)

    def context(
        self,
        call: ToolCall,
        tool: str,
        signal: StopSignal,
        retry: bool,
        on_progress: Callable[[str, str], None] | None,
    ) -> ToolContext:
        """What the call's tool may use: progress into the trace, a child run kept in this state, a process noted."""

        def progress(label: str) -> None:
            self.emit({**self.header(), "type": "tool_progress", "tool": tool, "call_id": call["id"], "label": label})
            if on_progress is not None:
                on_progress(tool, label)

        def started(pid: int) -> None:  # a command began: its process group is on disk before anything else
            self.state.processes[call["id"]] = pid
            self.save()

        def intend(intent: Intent) -> None:  # a change's outcome is on disk before the change is made
            self.state.intents[call["id"]] = intent
            self.save()

        slot = ChildSlot(self, call["id"])
        earlier = self.state.intents.get(call["id"]) if retry else None
        return ToolContext(self.state.run_id, call["id"], signal, progress, slot, retry, started, intend, earlier)

    def end(self, ending: Ending) -> RunState:
        """A run that cannot go on leaves no call without a result: its transcript stays valid to send."""
        if ending.status == "failed":
            for call in pending(self.state.messages):
                self.decided(call, stopped_first(ending.reason))
        return self.finish(ending.status, ending.reason, ending.interruption)

    def finish(self, status: Status, reason: str, interruption: Interruption | None) -> RunState:
        state = self.state
        state.status, state.reason, state.interruption = status, reason, interruption
        if status == "failed":
            state.error = state.error or reason
        self.save_then_emit(
            {
                **self.header(),
                "type": "run_stopped",
                "status": status,
                "reason": reason,
                "turns": state.turns,
                "cost_usd": state.total_cost_usd,
            }
        )
        return state
