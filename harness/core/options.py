"""How a run is driven: the model, where its state and trace go, its Stop signal and its policies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.core.policy import Dedupe, ToolErrorPolicy
from harness.core.protocols import Model, StateStore, TraceSink
from harness.core.state import RunState
from harness.core.stop import StopSignal
from harness.core.turn import Control, FolderIndex
from harness.prompts import declined
from wire.types import Message

MAX_REPLY_TOKENS = 1024  # each reply's cap when none is given: no request may run on to the end of the window


@dataclass
class RunOptions:
    """Everything about a run that is not its state. Limits live in the state, so they survive a restart."""

    model: Model
    store: StateStore | None = None
    trace: TraceSink | None = None
    signal: StopSignal = field(default_factory=StopSignal)
    errors: ToolErrorPolicy = field(default_factory=ToolErrorPolicy)
    dedupe: Dedupe = "off"
    stop_when: Sequence[Callable[[RunState], bool]] = ()
    on_progress: Callable[[str, str], None] | None = None
    reject_text: Callable[[str, str | None], str] = declined
    max_output_chars: int = 20_000
    max_tokens: int = MAX_REPLY_TOKENS
    trace_payloads: bool = False
    count_tokens: Callable[[Message], int] | None = None  # o200k_base when none is given
    # none by default: a library caller's model is not assumed small; a RunConfig's profile says which (CLI, eval)
    controls: Sequence[Control] = ()
    index: FolderIndex | None = None  # the workspace's index, shared by the tools and the controls

    def token_counter(self) -> Callable[[Message], int]:
        """Counts a message's tokens (o200k_base unless given a counter); the encoder loads on the first count,
        so a run that never counts (no context budget, no control that fits one) never loads it."""
        if self.count_tokens is None:
            counter: list[Callable[[Message], int]] = []

            def count(message: Message) -> int:
                if not counter:
                    from wire.tokens import TokenCounter

                    counter.append(TokenCounter().message)
                return counter[0](message)

            self.count_tokens = count
        return self.count_tokens
