"""The agent loop: `run(state, tools, options)`, a function over a serialisable run state.

Each iteration drains pending calls (tool calls of the last reply with no result yet), checks the limits,
and only then asks the model. Resume, approval and the normal flow are that one path. A run ends in
exactly one of: completed, failed, max_turns_exceeded, budget_exceeded, interrupted, with a reason.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from harness.core.approvals import needs_person
from harness.core.history import request_for
from harness.core.journal import Journal
from harness.core.options import RunOptions
from harness.core.policy import bound, may_reuse, signature
from harness.core.protocols import ModelReply, Tool
from harness.core.registry import Registry
from harness.core.results import ToolResult, as_result
from harness.core.state import Ending, Interruption, RunState, fresh_ids, over, pending
from harness.core.turn import RunContext, Turn, calls_kept
from harness.errors import ContextTooSmall, NotResumable, ProviderError, Stopped
from harness.prompts import not_run
from wire.types import ToolCall


async def run(state: RunState, tools: Registry, options: RunOptions) -> RunState:
    """Run until one of the five endings; a resumable state goes on from exactly where it stopped."""
    return await Loop(state, tools, options).run()


class Loop:
    def __init__(self, state: RunState, tools: Registry, options: RunOptions) -> None:
        self.state, self.tools, self.options, self.signal = state, tools, options, options.signal
        self.controls = options.controls
        self.context = RunContext(state, tools, options.token_counter(), options.index)
        self.journal = Journal(state, options.store, options.trace, options.trace_payloads)
        self.started_at = time.monotonic()

    async def run(self) -> RunState:
        if not (self.state.status == "running" or self.state.resumable):
            raise NotResumable(f"run {self.state.run_id} ended {self.state.status}; it cannot be resumed")
        self.state.status, self.state.reason, self.state.interruption = "running", None, None
        deadline = self.signal.arm(self.state.limits.timeout_s)
        try:
            while True:
                ending = await self.drain_pending() or self.check_limits() or await self.take_turn()
                if ending is not None:
                    return self.journal.end(ending)
        except Stopped as exc:
            return self.journal.finish("interrupted", exc.reason, Interruption("cancelled", exc.reason))
        except asyncio.CancelledError:  # a parent's Stop cancelled this (child) run: record it, then obey
            reason = self.signal.reason or "cancelled"
            self.journal.finish("interrupted", reason, Interruption("cancelled", reason))
            raise
        except ProviderError as exc:
            self.state.error, self.state.error_source = str(exc), "provider"
            return self.journal.end(Ending("failed", str(exc)))
        finally:
            if deadline is not None:
                deadline.cancel()

    # step 1: drain pending calls ---------------------------------------------------------------------
    async def drain_pending(self) -> Ending | None:
        for call in pending(self.state.messages):
            ending = await self.settle(call)
            if ending is not None:
                return ending
        return None

    async def settle(self, call: ToolCall) -> Ending | None:
        tool = self.tools.get(call["function"]["name"])
        screened = self.screen(call, tool)
        if isinstance(screened, str) or tool is None:
            self.journal.decided(call, str(screened))
            return None
        ending = self.gate(call, tool, screened)
        if ending is not None:
            return ending
        key = signature(tool.name, screened)
        earlier = self.state.read_cache.get(key)
        if earlier is not None and may_reuse(self.options.dedupe, tool.read_only):
            self.journal.decided(call, self.journal.result_of(earlier))
            return None
        slots = [(c.name, c.before_call(self.context, call, tool, screened)) for c in self.controls]
        filled = sorted((name, slot) for name, slot in slots if slot is not None)  # every control is asked
        if not filled:
            return await self.execute(call, tool, screened)
        shown = [slot.shown for _, slot in filled if isinstance(slot, ToolResult)]
        if shown:
            self.state.shown[call["id"]] = shown[0]
        self.journal.decided(call, "\n\n".join(s.text if isinstance(s, ToolResult) else s for _, s in filled))
        return None

    def screen(self, call: ToolCall, tool: Tool | None) -> str | dict[str, Any]:
        """The call's validated arguments, or the words for a slot the harness fills without running anything."""
        if call["id"] in self.state.rejections:
            return self.options.reject_text(call["function"]["name"], self.state.rejections[call["id"]])
        return self.tools.screen(call)

    def gate(self, call: ToolCall, tool: Tool, args: dict[str, Any]) -> Ending | None:
        """Stop before a call that needs a person: unapproved, or a write whose first attempt may have landed."""
        reason = needs_person(self.state, call["id"], tool, args)
        if reason is None:
            return None
        self.journal.approval_required(call, tool.name, args, reason)
        return Ending("interrupted", reason, Interruption.approval(call["id"], tool.name, args, reason))

    async def execute(self, call: ToolCall, tool: Tool, args: dict[str, Any]) -> Ending | None:
        retry = call["id"] in self.state.started
        if not tool.read_only and not retry:
            self.state.started.append(call["id"])  # on disk before the tool runs: exactly-once for writes
            self.journal.save()
        self.journal.tool_start(call, tool.name, args)
        began, ending = time.perf_counter(), None
        try:
            context = self.journal.context(call, tool.name, self.signal, retry, self.options.on_progress)
            output = await self.signal.race(tool.run(args, context))
            result, ok = as_result(output), True
            result = replace(result, text=bound(result.text, self.options.max_output_chars))
        except Stopped:
            raise
        except Exception as exc:
            result, ok, ending = ToolResult(self.options.errors.result_text(exc)), False, self.failure(tool, exc)
        if ok:
            self.state.read_cache.setdefault(signature(tool.name, args), call["id"])
            self.state.shown[call["id"]] = result.shown
        for control in self.controls:  # before the result is saved: what a control noted is saved with it
            control.after_call(self.context, call, tool, args, result, ok)
        self.journal.ran(call, args, result.text, ok, (time.perf_counter() - began) * 1000)
        return ending

    def failure(self, tool: Tool, exc: Exception) -> Ending | None:
        reason = self.options.errors.stops_run(tool.name, exc)
        if reason is None:
            return None
        self.state.error, self.state.error_source = str(exc), "tool"
        return Ending("failed", reason)

    # step 2: check limits and stop conditions --------------------------------------------------------
    def check_limits(self) -> Ending | None:
        state, limits = self.state, self.state.limits
        if limits.max_turns is not None and state.turns >= limits.max_turns:
            return over("max_turns_exceeded", "max_turns", f"reached the turn cap of {limits.max_turns}")
        if limits.max_budget_usd is not None and (why := state.over_budget(limits.max_budget_usd)):
            return over("budget_exceeded", "max_budget", why)
        if limits.timeout_s is not None and time.monotonic() - self.started_at >= limits.timeout_s:
            return over("interrupted", "cancelled", f"deadline of {limits.timeout_s:g}s reached")
        for condition in self.options.stop_when:
            if condition(state):
                return over("interrupted", "cancelled", f"stop condition {getattr(condition, '__name__', '?')} met")
        return None

    # step 3: ask the model, record the reply, admit its batch -----------------------------------------
    async def take_turn(self) -> Ending | None:
        try:
            request, dropped = request_for(
                self.state, self.tools.definitions(), self.options.max_tokens, self.context.count
            )
            turn = self.shaped(Turn(request))
        except ContextTooSmall as exc:
            return over("budget_exceeded", "max_budget", f"context budget: {exc}")
        if dropped:
            self.journal.context_trimmed(dropped)
        began = time.perf_counter()
        reply = await self.signal.race(self.options.model.complete(turn.settle()))
        if turn.answer is not None:  # the answer turn calls only what it may still call, if anything
            reply = calls_kept(reply, turn.finishing)
        for control in self.controls:
            reply = control.on_reply(self.context, turn, reply)
        reply = replace(reply, message=fresh_ids(self.state.messages, reply.message))
        self.journal.reply(reply, (time.perf_counter() - began) * 1000, turn.answer)
        calls = reply.message.get("tool_calls", [])
        return self.admit(calls) if calls else self.answered(turn, reply)

    def shaped(self, turn: Turn) -> Turn:
        """The turn's request, through the controls' three phases: whether it is the answer turn, the call a
        turn that may call tools makes, and what the model reads."""
        reasons = [why for control in self.controls if (why := control.decide(self.context, turn)) is not None]
        if reasons:  # every control is asked, whichever says so first
            turn.answer_now("; ".join(sorted(set(reasons))), self.finishing())
        if turn.answer is None:
            for control in self.controls:
                control.before_request(self.context, turn)
            if turn.nothing_left():
                turn.answer_now("nothing left to look at", self.finishing())
        for control in self.controls:
            control.before_send(self.context, turn)
        return turn

    def finishing(self) -> list[str]:
        """The tools an answer turn may still call: those that change files, while the run has changed none."""
        if any(shown.kind == "changed" for shown in self.state.shown.values()):
            return []
        return [tool.name for tool in self.tools if not tool.read_only]

    def answered(self, turn: Turn, reply: ModelReply) -> Ending | None:
        """A reply without calls ends the run, unless a control says it is not the answer yet (every control is
        asked; what those that say so ask is put to the model as one message)."""
        said = [(c.name, not_yet) for c in self.controls if (not_yet := c.on_answer(self.context, turn, reply))]
        if said:
            said.sort(key=lambda named: named[0])
            asks = [str(n.ask.get("content") or "") for _, n in said if n.ask is not None]
            if asks:
                self.journal.append({"role": "user", "content": "\n\n".join(asks)})
            self.journal.not_an_answer("; ".join(n.reason for _, n in said))
            return None
        cut = " (cut at max_tokens)" if reply.finish_reason == "length" else ""
        return Ending("completed", f"the model answered{cut}")

    def admit(self, calls: list[ToolCall]) -> Ending | None:
        """Refuse a whole batch that would exceed the tool-call cap; the refusal is written into every slot."""
        cap, wanted = self.state.limits.max_tool_calls, self.state.tool_calls + len(calls)
        if cap is not None and wanted > cap:
            why = f"tool-call cap: a batch of {len(calls)} would make {wanted} calls, over the cap of {cap}; none ran"
            for call in calls:
                self.journal.decided(call, not_run(why))
            return over("budget_exceeded", "max_budget", why)
        self.state.tool_calls = wanted
        return None
