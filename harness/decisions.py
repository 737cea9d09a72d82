"""A person's decisions about a pending call: approve it (bound to its exact arguments) or reject it."""

from __future__ import annotations

import json

from harness.errors import ApprovalError
from harness.state import RunState, digest, pending
from wire.types import ToolCall


def pending_call(state: RunState, call_id: str) -> ToolCall:
    for call in pending(state.messages):
        if call["id"] == call_id:
            return call
    waiting = ", ".join(c["id"] for c in pending(state.messages)) or "none"
    raise ApprovalError(f"call {call_id!r} is not pending in run {state.run_id} (pending: {waiting})")


def approve(state: RunState, call_id: str) -> None:
    """Let the call run on resume, with exactly the arguments it has now."""
    call = pending_call(state, call_id)
    try:
        args = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError as exc:
        raise ApprovalError(f"call {call_id!r} has arguments that are not JSON; there is nothing to approve") from exc
    state.approvals[call_id] = digest(args)
    state.rejections.pop(call_id, None)
    if call_id in state.started:  # the person vouches for running it again
        state.started.remove(call_id)


def reject(state: RunState, call_id: str, reason: str | None = None) -> None:
    """Refuse the call; on resume the refusal (with the reason) is written into its slot for the model."""
    pending_call(state, call_id)
    state.rejections[call_id] = reason
    state.approvals.pop(call_id, None)
