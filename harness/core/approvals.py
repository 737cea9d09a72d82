"""A person's decisions about a pending call: approve it (bound to its exact arguments) or reject it."""

from __future__ import annotations

import json
from typing import Any

from harness.core.policy import fingerprint
from harness.core.protocols import Tool
from harness.core.registry import approval_needed
from harness.core.state import RunState, pending
from harness.errors import ApprovalError
from wire.types import ToolCall


def pending_call(state: RunState, call_id: str) -> ToolCall:
    for call in pending(state.messages):
        if call["id"] == call_id:
            return call
    waiting = ", ".join(c["id"] for c in pending(state.messages)) or "none"
    raise ApprovalError(f"call {call_id!r} is not pending in run {state.run_id} (pending: {waiting})")


DIGEST_CHARS = 12


def call_digest(call: ToolCall) -> str:
    """A short digest of a call's tool and exact arguments: what a person is shown, and approves."""
    return fingerprint([call["function"]["name"], call["function"]["arguments"]])[:DIGEST_CHARS]


def approve(state: RunState, call_id: str, digest: str | None = None) -> ToolCall:
    """Let the call run on resume, with exactly the arguments it has now; with `digest` (the one the call was
    shown with when the run stopped), only when it is still that call: a state rewritten since names another."""
    call = pending_call(state, call_id)
    if digest is not None and digest != call_digest(call):
        raise ApprovalError(
            f"call {call_id!r} is not the call that was shown for approval (its digest is {call_digest(call)}, not "
            f"{digest}): the run's saved state changed since; nothing was approved"
        )
    try:
        args = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError as exc:
        raise ApprovalError(f"call {call_id!r} has arguments that are not JSON; there is nothing to approve") from exc
    state.approvals[call_id] = fingerprint(args)
    state.rejections.pop(call_id, None)
    if call_id in state.started:  # the person vouches for running it again
        state.started.remove(call_id)
    return call


def reject(state: RunState, call_id: str, reason: str | None = None) -> None:
    """Refuse the call; on resume the refusal (with the reason) is written into its slot for the model."""
    pending_call(state, call_id)
    state.rejections[call_id] = reason
    state.approvals.pop(call_id, None)


def needs_person(state: RunState, call_id: str, tool: Tool, args: dict[str, Any]) -> str | None:
    """Why a call must wait for a person: it is not approved, or it is a write whose first attempt may have
    landed (and the tool cannot tell on its own); None when it may run."""
    if call_id in state.started and not tool.honours_idempotency_key:
        group = state.processes.get(call_id)
        ended = f"; its process group {group} ended with the harness" if group else ""
        return (
            f"{tool.name} call {call_id} started before the run stopped and may have taken effect{ended}; "
            "approve to run it again or reject it"
        )
    if approval_needed(tool, args) and state.approvals.get(call_id) != fingerprint(args):
        return f"{tool.name} needs approval before it runs"
    return None
