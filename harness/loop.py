"""The agent loop: `run(state, tools, options)`, a function over a serialisable run state.

Each iteration drains pending calls (tool calls of the last reply with no result yet), checks the limits,
and only then asks the model. Resume, approval and the normal flow are that one path. A run ends in
exactly one of: completed, failed, max_turns_exceeded, budget_exceeded, interrupted, with a reason.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.context import ContextTooSmall, select
from harness.errors import NotResumable, PermanentToolError, ProviderError
from harness.journal import Journal
from harness.options import RunOptions
from harness.policy import bound, may_reuse, signature
from harness.protocols import ModelRequest, Tool, ToolContext
from harness.state import Interruption, InterruptionType, RunState, Status, digest, pending
from harness.stop import Stopped
from harness.tools.base import Invalid, Registry, approval_needed
from wire.types import Message, ToolCall


@dataclass(frozen=True)
class Stop:
    status: Status
    reason: str
    interruption: Interruption | None = None


def over(status: Status, kind: InterruptionType, reason: str) -> Stop:
    return Stop(status, reason, Interruption(kind, reason))


async def run(state: RunState, tools: Registry, options: RunOptions) -> RunState:
    """Run until one of the five endings; a resumable state goes on from exactly where it stopped."""
    return await Loop(state, tools, options).run()


class Loop:
    def __init__(self, state: RunState, tools: Registry, options: RunOptions) -> None:
        self.state, self.tools, self.options, self.signal = state, tools, options, options.signal
        self.journal = Journal(state, options.store, options.trace, options.trace_payloads)
        self.started_at = time.monotonic()

    async def run(self) -> RunState:
        if not (self.state.status == "running" or self.state.resumable):
            raise NotResumable(f"run {self.state.run_id} ended {self.state.status}; it cannot be resumed")
        self.state.status, self.state.reason, self.state.interruption = "running", None, None
        deadline = self.arm_deadline()
        try:
            while True:
                stop = await self.drain_pending() or self.check_limits() or await self.take_turn()
                if stop is not None:
                    return self.journal.finish(stop.status, stop.reason, stop.interruption)
        except Stopped as exc:
            return self.journal.finish("interrupted", exc.reason, Interruption("cancelled", exc.reason))
        except asyncio.CancelledError:  # a parent's Stop cancelled this (child) run: record it, then obey
            reason = self.signal.reason or "cancelled"
            self.journal.finish("interrupted", reason, Interruption("cancelled", reason))
            raise
        finally:
            if deadline is not None:
                deadline.cancel()

    # step 1: drain pending calls ---------------------------------------------------------------------
    async def drain_pending(self) -> Stop | None:
        for call in pending(self.state.messages):
            stop = await self.settle(call)
            if stop is not None:
                return stop
        return None

    async def settle(self, call: ToolCall) -> Stop | None:
        tool = self.tools.get(call["function"]["name"])
        screened = self.screen(call, tool)
        if isinstance(screened, str) or tool is None:
            self.journal.decided(call, str(screened))
            return None
        stop = self.gate(call, tool, screened)
        if stop is not None:
            return stop
        earlier = self.state.read_cache.get(signature(tool.name, screened))
        if earlier is not None and may_reuse(self.options.dedupe, tool.read_only):
            self.journal.decided(call, self.journal.result_of(earlier))
            return None
        return await self.execute(call, tool, screened)

    def screen(self, call: ToolCall, tool: Tool | None) -> str | dict[str, Any]:
        """The call's validated arguments, or the words for a slot the harness fills without running anything."""
        name = call["function"]["name"]
        if call["id"] in self.state.rejections:
            return self.options.reject_text(name, self.state.rejections[call["id"]])
        if tool is None:
            return f"Error: unknown tool {name!r}. The tools are: {', '.join(self.tools.names())}."
        args = self.tools.arguments(tool, call["function"]["arguments"])
        return f"Error: {args.message}" if isinstance(args, Invalid) else args

    def gate(self, call: ToolCall, tool: Tool, args: dict[str, Any]) -> Stop | None:
        """Stop before a call that needs a person: unapproved, or a write whose first attempt may have landed."""
        if call["id"] in self.state.started and not tool.honours_idempotency_key:
            why = (
                f"{tool.name} call {call['id']} started before the run stopped and may have taken effect; "
                "approve to run it again or reject it"
            )
            return self.ask_approval(call, tool, args, why)
        if approval_needed(tool, args) and self.state.approvals.get(call["id"]) != digest(args):
            return self.ask_approval(call, tool, args, f"{tool.name} needs approval before it runs")
        return None

    def ask_approval(self, call: ToolCall, tool: Tool, args: dict[str, Any], reason: str) -> Stop:
        self.journal.emit(
            "approval_required",
            tool=tool.name,
            call_id=call["id"],
            reason=reason,
            **self.journal.payload(args=args),
        )
        return Stop("interrupted", reason, Interruption.approval(call["id"], tool.name, args, reason))

    async def execute(self, call: ToolCall, tool: Tool, args: dict[str, Any]) -> Stop | None:
        if not tool.read_only:
            self.state.started.append(call["id"])  # on disk before the tool runs: exactly-once for writes
            self.journal.save()
        self.journal.emit("tool_start", tool=tool.name, call_id=call["id"], **self.journal.payload(args=args))
        began, stop = time.perf_counter(), None
        try:
            output = await self.signal.race(tool.run(args, self.context_for(call, tool)))
            output, ok = bound(str(output), self.options.max_output_chars), True
        except Stopped:
            raise
        except Exception as exc:
            output, ok, stop = self.options.errors.result_text(exc), False, self.failure(tool, exc)
        if ok:
            self.state.read_cache.setdefault(signature(tool.name, args), call["id"])
        self.journal.ran(call, args, output, ok, (time.perf_counter() - began) * 1000)
        return stop

    def failure(self, tool: Tool, exc: Exception) -> Stop | None:
        if isinstance(exc, PermanentToolError) and self.options.errors.stop_on_permanent:
            reason = f"{tool.name} failed and retrying cannot help: {exc}"
        elif self.options.errors.mode == "fatal":
            reason = f"{tool.name} failed: {exc}"
        else:
            return None
        self.state.error, self.state.error_source = str(exc), "tool"
        return Stop("failed", reason)

    def context_for(self, call: ToolCall, tool: Tool) -> ToolContext:
        def progress(label: str) -> None:
            self.journal.emit("tool_progress", tool=tool.name, call_id=call["id"], label=label)
            if self.options.on_progress is not None:
                self.options.on_progress(tool.name, label)

        return ToolContext(self.state.run_id, call["id"], self.signal, progress, self.state.child_usage.merge)

    # step 2: check limits and stop conditions --------------------------------------------------------
    def check_limits(self) -> Stop | None:
        state, limits = self.state, self.state.limits
        if limits.max_turns is not None and state.turns >= limits.max_turns:
            return over("max_turns_exceeded", "max_turns", f"reached the turn cap of {limits.max_turns}")
        if limits.max_budget_usd is not None and (stop := self.check_budget(limits.max_budget_usd)):
            return stop
        if limits.timeout_s is not None and time.monotonic() - self.started_at >= limits.timeout_s:
            return over("interrupted", "cancelled", f"deadline of {limits.timeout_s:g}s reached")
        for condition in self.options.stop_when:
            if condition(state):
                return over("interrupted", "cancelled", f"stop condition {getattr(condition, '__name__', '?')} met")
        return None

    def check_budget(self, budget: float) -> Stop | None:
        if not (self.state.usage.cost_known and self.state.child_usage.cost_known):
            return over(
                "budget_exceeded",
                "max_budget",
                "cost unknown: a reply carried no usage, so the budget cannot be enforced",
            )
        spent = self.state.total_cost_usd
        if spent >= budget:
            why = f"spent ${spent:.6f} of a ${budget:.6f} budget (checked before each turn: overshoot <= one turn)"
            return over("budget_exceeded", "max_budget", why)
        return None

    # step 3: ask the model, record the reply, admit its batch -----------------------------------------
    async def take_turn(self) -> Stop | None:
        try:
            messages, dropped = select(self.state.messages, self.state.limits.context_tokens, self.counter())
        except ContextTooSmall as exc:
            return over("budget_exceeded", "max_budget", f"context budget: {exc}")
        if dropped:
            self.journal.emit("context_trimmed", dropped_messages=dropped)
        began = time.perf_counter()
        try:
            reply = await self.signal.race(
                self.options.model.complete(ModelRequest(messages, self.tools.definitions(), self.options.max_tokens))
            )
        except ProviderError as exc:
            self.state.error, self.state.error_source = str(exc), "provider"
            return Stop("failed", str(exc))
        self.journal.reply(reply, (time.perf_counter() - began) * 1000)
        calls = reply.message.get("tool_calls", [])
        if not calls:
            cut = " (cut at max_tokens)" if reply.finish_reason == "length" else ""
            return Stop("completed", f"the model answered{cut}")
        return self.admit(calls)

    def admit(self, calls: list[ToolCall]) -> Stop | None:
        """Refuse a whole batch that would exceed the tool-call cap; the refusal is written into every slot."""
        cap, wanted = self.state.limits.max_tool_calls, self.state.tool_calls + len(calls)
        if cap is not None and wanted > cap:
            why = f"tool-call cap: a batch of {len(calls)} would make {wanted} calls, over the cap of {cap}; none ran"
            for call in calls:
                self.journal.decided(call, f"Not run: {why}.")
            return over("budget_exceeded", "max_budget", why)
        self.state.tool_calls = wanted
        return None

    def counter(self) -> Callable[[Message], int]:
        if self.options.count_tokens is None and self.state.limits.context_tokens is not None:
            from wire.tokens import TokenCounter  # the encoder loads only when a context budget needs it

            self.options.count_tokens = TokenCounter().message
        return self.options.count_tokens or (lambda _: 0)

    def arm_deadline(self) -> asyncio.TimerHandle | None:
        timeout = self.state.limits.timeout_s
        if timeout is None:
            return None
        return asyncio.get_running_loop().call_later(timeout, self.signal.set, f"deadline of {timeout:g}s reached")
