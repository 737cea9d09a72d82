"""What is sent to the model: the whole transcript, or, under a context budget, its newest whole turns."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness.core.protocols import ModelRequest
from harness.core.state import RunState
from harness.errors import ContextTooSmall
from wire.types import Message, ToolDefinition

Counter = Callable[[Message], int]


def groups(messages: Sequence[Message]) -> list[list[Message]]:
    """Split into units that must travel together: an assistant message stays with its tool results."""
    units: list[list[Message]] = []
    for message in messages:
        if message["role"] == "tool" and units:
            units[-1].append(message)
        else:
            units.append([message])
    return units


def select(messages: Sequence[Message], budget: int | None, count: Counter) -> tuple[list[Message], int]:
    """Messages to send and how many were dropped.

    Keeps every system message and the first user message, then as many of the newest whole turns as
    fit; raises ContextTooSmall when the kept head plus the newest turn exceed the budget.
    """
    if budget is None:
        return list(messages), 0
    first_user = next((i for i, m in enumerate(messages) if m["role"] == "user"), -1)
    head = [m for i, m in enumerate(messages) if m["role"] == "system" or i == first_user]
    rest = [m for i, m in enumerate(messages) if m["role"] != "system" and i != first_user]
    used = sum(count(m) for m in head)
    if used > budget:
        raise ContextTooSmall(f"the system and first user messages need {used} tokens; the context budget is {budget}")
    kept: list[list[Message]] = []
    for unit in reversed(groups(rest)):
        cost = sum(count(m) for m in unit)
        if used + cost > budget:
            if not kept and rest:
                raise ContextTooSmall(f"the newest turn needs {used + cost} tokens; the context budget is {budget}")
            break
        kept.append(unit)
        used += cost
    selected = head + [m for unit in reversed(kept) for m in unit]
    return selected, len(messages) - len(selected)


def request_for(
    state: RunState, definitions: Sequence[ToolDefinition], max_tokens: int | None, count: Counter
) -> tuple[ModelRequest, int]:
    """The plain request for the next turn (the transcript under the budget, every tool), and how many old
    messages the budget dropped from it. Controls shape it from here."""
    messages, dropped = select(state.messages, state.limits.context_tokens, count)
    return ModelRequest(messages, list(definitions), max_tokens), dropped
