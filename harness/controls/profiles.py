"""The controls by name, the profiles made of them, and how `auto` picks one from what the server says.

A profile is a list of controls in the order they act. `small` is for models of a few billion parameters
or less; `tiny` is `small` which asks a change refused for want of a read again as a digest and makes one
call per reply beside tools that change files, for a model under a billion parameters; `none` is the plain
loop, for a model that calls tools and answers on its own. No control of any profile reads the question's
words: what a question is about is the workspace index's ranking of it against the folder. `auto` asks
the server for the model's card and takes `tiny` when it reports fewer than TINY_BELOW parameters,
`small` under SMALL_BELOW (llama-server and this project's server report `meta.n_params`), `none`
otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import replace

from harness.controls.base import Hooks
from harness.controls.change_alone import ChangeAlone
from harness.controls.digest import DigestAnswers
from harness.controls.empty_reply import EmptyReply
from harness.controls.fit_context import FitContext
from harness.controls.grounded import Grounded
from harness.controls.keep_aside import KeepAside
from harness.controls.last_turn import LastTurn
from harness.controls.look_first import LookFirst
from harness.controls.parallel_calls import ParallelCalls
from harness.controls.read_first import ReadFirst
from harness.controls.repeat_guard import RepeatGuard
from harness.controls.trim_loop import TrimLoop
from harness.controls.unread_paths import UnreadPaths
from harness.core.config import NO_CONTROLS, ControlParameter, ControlSpec, Profile
from harness.core.turn import Control
from harness.errors import ConfigError
from wire.types import TOOL_EXTENSIONS, Extension, ModelCard

CONTROLS: dict[str, type[Hooks]] = {
    control.name: control
    for control in (
        RepeatGuard,
        ReadFirst,
        ChangeAlone,
        EmptyReply,
        TrimLoop,
        LookFirst,
        UnreadPaths,
        ParallelCalls,
        LastTurn,
        FitContext,
        DigestAnswers,
        Grounded,
        KeepAside,
    )
}
SMALL = Profile(
    "small",
    (
        ControlSpec("repeat_guard"),
        ControlSpec("read_first"),
        ControlSpec("change_alone"),
        ControlSpec("empty_reply"),
        ControlSpec("trim_loop"),
        ControlSpec("look_first"),
        ControlSpec("unread_paths", {"look_while_unread": 6}),
        ControlSpec("parallel_calls"),
        ControlSpec("last_turn"),
        ControlSpec("fit_context"),
        ControlSpec("digest_answers", {"focus": True, "matching_lines": 12}),
        ControlSpec("grounded"),
    ),
    why="asked for",
)
TINY_PARAMS: Mapping[str, Mapping[str, ControlParameter]] = {
    "digest_answers": {"after_refusal": True},
    "parallel_calls": {"alone_with_changes": True},
}
TINY = Profile(
    "tiny",
    tuple(ControlSpec(s.name, {**s.params, **TINY_PARAMS.get(s.name, {})}) for s in SMALL.controls),
    why="asked for",
)
PROFILES = {"tiny": TINY, "small": SMALL, "none": NO_CONTROLS}
SMALL_BELOW = 4_000_000_000  # parameters
TINY_BELOW = 1_000_000_000


def build(profile: Profile) -> list[Control]:
    """The profile's controls, built from their specs (an unknown name or parameter is a ConfigError)."""
    built: list[Control] = []
    for spec in profile.controls:
        kind = CONTROLS.get(spec.name)
        if kind is None:
            raise ConfigError(f"unknown control {spec.name!r}; the controls are {', '.join(CONTROLS)}")
        try:
            built.append(kind(**spec.params))
        except TypeError as exc:
            raise ConfigError(f"control {spec.name!r}: {exc}") from exc
    return built


def named(name: str) -> Profile:
    if name not in PROFILES:
        raise ConfigError(f"unknown controls profile {name!r}; use auto, {', '.join(PROFILES)}")
    return PROFILES[name]


def parameters_of(card: ModelCard) -> int | None:
    return card.meta.n_params if card.meta is not None else None


def context_of(card: ModelCard | None) -> int | None:
    """The context window the server runs the model with, when its card says (this project's server does)."""
    return card.meta.context if card is not None and card.meta is not None else None


TOLD: tuple[Extension, ...] = (*TOOL_EXTENSIONS, "allowed_tools")  # a control is told those that shape calls
SERVER_FACTS = ("context", *TOLD)


def facts_of(card: ModelCard | None) -> dict[str, ControlParameter]:
    """What a control may be told of the server, from the model's card: its context window (`context`), and
    whether it narrows calls by the `tool_parameters` field, ends a reply at a repeated call when told
    `distinct_calls`, and keeps a call to the tools `allowed_tools` lists (this project's server lists its
    extensions)."""
    facts: dict[str, ControlParameter] = {}
    if (window := context_of(card)) is not None:
        facts["context"] = window
    if card is not None and card.meta is not None:
        facts |= {extension: True for extension in TOLD if extension in card.meta.extensions}
    return facts


def fitted(specs: tuple[ControlSpec, ...], facts: Mapping[str, ControlParameter]) -> tuple[ControlSpec, ...]:
    """The controls told the server's facts, each the ones it has a field for (fit_context and
    digest_answers the window, unread_paths whether calls can be narrowed without changing the prompt,
    parallel_calls whether a reply can be ended at a repeated call)."""
    return tuple(ControlSpec(s.name, {**s.params, **told(s.name, facts)}) for s in specs)


def told(name: str, facts: Mapping[str, ControlParameter]) -> dict[str, ControlParameter]:
    kind = CONTROLS.get(name)
    fields = {f.name for f in dataclasses.fields(kind)} if kind is not None else set()  # type: ignore[arg-type]
    return {key: value for key, value in facts.items() if key in fields}


def needs_card(profile: Profile) -> bool:
    """Whether a control of the profile takes a fact of the server and none has been told one yet (a profile
    fitted to a card is not fitted again, whatever the card said)."""
    takes = any(told(s.name, dict.fromkeys(SERVER_FACTS, 0)) for s in profile.controls)
    return takes and not any(key in SERVER_FACTS for s in profile.controls for key in s.params)


def card_for(model: str, cards: Sequence[ModelCard]) -> ModelCard | None:
    """The server's card for the model: the one with its id, or the only one."""
    return next((c for c in cards if c.id == model), cards[0] if len(cards) == 1 else None)


def fitted_profile(profile: Profile, model: str, cards: Sequence[ModelCard] | None) -> Profile:
    """A profile named outright, its controls told the server's facts when its card says them."""
    card = card_for(model, cards) if cards else None
    return replace(profile, controls=fitted(profile.controls, facts_of(card)))


def choose(model: str, cards: Sequence[ModelCard] | None) -> Profile:
    """`auto`: tiny or small for a model the server says is that small, none for any other (or when it says
    nothing)."""
    if cards is None:
        return Profile("none", why="auto: the server's model list could not be read")
    card = card_for(model, cards)
    count = parameters_of(card) if card is not None else None
    if count is None:
        return Profile("none", why=f"auto: the server does not say how many parameters {model} has")
    size = f"{count / 1e9:.2f}B parameters"
    for profile, below in ((TINY, TINY_BELOW), (SMALL, SMALL_BELOW)):
        if count < below:
            why = f"auto: {model} has {size}, under {below / 1e9:g}B"
            return Profile(profile.name, fitted(profile.controls, facts_of(card)), why=why)
    return Profile("none", why=f"auto: {model} has {size}, not under {SMALL_BELOW / 1e9:g}B")
