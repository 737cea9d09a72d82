"""One request's generation, token by token, with no llama.cpp in sight: sampling, constraints, stops, streaming.

The scheduler evaluates tokens; a Decoder decides what they mean. It picks the next token from logits
(argmax for temperature 0, so the same request gives the same reply), masked by the active grammar. With
tools offered, the reply is watched for the opening of a call in any form the dialect knows; at that
moment the call grammar takes over, fed every token of the reply so far, and from then on each token
the grammar forces is appended without sampling (jump-forward). Text is released for streaming only
once it can no longer turn out to be a call or a stop string.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

import llguidance
import llguidance.numpy
import numpy as np
import numpy.typing as npt

from models.dialects import Parsed, opening, parse, partial_suffix
from serve.llama.constraints import Grammars, ToolGrammar, free_reserve
from wire.types import AssistantMessage, FinishReason, TokenLogprob, ToolCall, TopLogprob

Finish = Literal["stop", "length", "cancelled"]
CLOSING_BONUS = 1e4


def closing_reserve(settings: Settings, written: int = 0) -> int:
    """The last tokens of a constrained reply, in which whatever closes the open JSON soonest is preferred, so a
    call or a document ends inside max_tokens instead of being cut there. A forced call's reserve also holds
    what of its shortest call is not written yet (`written`: the call's tokens so far that are not whitespace),
    so a call whose required keys alone take many tokens, or a model that spends its tokens on whitespace,
    still closes in time. However much is written, the reserve keeps room for the form's closing half (a
    list's bracket, the fence) and for ending a key just opened: its quote, the colon, the shortest value, the
    brackets around it; a call that runs on through optional keys is then still closed in time."""
    if not settings.call_tokens:
        return free_reserve(settings.max_tokens)
    return max(FORM_TOKENS, settings.call_tokens + FORM_TOKENS - written) + CLOSE_TOKENS


CLOSE_TOKENS = 4  # what closing an open value takes, beyond the call's shortest form


FORM_TOKENS = 8  # about what a call's form adds to it: a fence and its language, a list's brackets, spacing


def forced_call_floor(call_tokens: int) -> int:
    """The least `max_tokens` a reply that must be a call is served with: room for its shortest call, the
    form around it, and the closing reserve's own tokens."""
    return call_tokens + 2 * FORM_TOKENS


@dataclass(frozen=True)
class Closers:
    """The tokens that end an open JSON value soonest: inside a string, those that open with its closing quote
    (`"`, `"}`, `"]}`); outside one, those made only of `}` and `]` (a number or an object ends). A token of
    brackets inside a string would only lengthen it. Outside a string, whitespace only delays the end, so the
    tokens made only of whitespace (`spaces`) go last."""

    in_string: tuple[int, ...] = ()
    outside: tuple[int, ...] = ()
    spaces: tuple[int, ...] = ()

    @classmethod
    def of(cls, tokens: tuple[int, ...], piece: Callable[[int], bytes], spaces: tuple[int, ...] = ()) -> Closers:
        quoted = tuple(t for t in tokens if piece(t).startswith(b'"'))
        return cls(quoted, tuple(t for t in tokens if b'"' not in piece(t)), spaces)

    def at(self, text: str) -> tuple[int, ...]:
        return self.in_string if in_string(text) else self.outside


def in_string(text: str) -> bool:
    """Whether JSON text ends inside a string (an odd number of unescaped quotes)."""
    return string_state(text)[0]


def string_state(text: str, inside: bool = False, escaped: bool = False) -> tuple[bool, bool]:
    """Where JSON text leaves a reader that began in the state given: inside a string, after a backslash."""
    for char in text:
        if escaped:
            escaped = False
        elif inside and char == "\\":
            escaped = True
        elif char == '"':
            inside = not inside
    return inside, escaped


@dataclass(frozen=True)
class Settings:
    """What a request asks of its generation."""

    max_tokens: int
    temperature: float = 0.0  # 0 is argmax: the same request gives the same reply
    top_p: float = 1.0
    seed: int | None = 0  # None: fresh entropy (the request asked for a random seed)
    stop: tuple[str, ...] = ()
    logprobs: bool = False
    top_logprobs: int = 0
    tools: ToolGrammar | None = None  # watch for calls and constrain them once they open (tool_choice auto)
    forced: str | None = None  # a grammar from the first token (tool_choice required, response_format, grammar)
    offered: tuple[str, ...] | None = None  # the tool names whose calls are parsed out of the reply
    jump_forward: bool = True
    ignore_eos: bool = False
    call_tokens: int = 0  # a forced call's shortest call to the tools offered, in tokens (0: no forced call)
    distinct: frozenset[str] = frozenset()  # tools whose call repeated within the reply ends it (and is dropped)


@dataclass
class Decoder:
    settings: Settings
    grammars: Grammars
    piece: Callable[[int], bytes]
    is_end: Callable[[int], bool]
    end_tokens: tuple[int, ...] = ()
    closers: Closers = field(default_factory=Closers)
    hidden: frozenset[int] = frozenset()  # tokens the reply's text leaves out (control tokens)
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    forced_count: int = 0
    whole_calls: int = 0  # the calls of the reply whose text is complete (counted only with `distinct`)
    scanned: int = 0  # how much of `text` was looked at for a closed call
    kept_calls: int | None = None  # the calls the reply keeps, when it ended at a repeated one
    finish: Finish | None = None
    matcher: llguidance.LLMatcher | None = None
    watching: bool = False  # looking for the opening of a call
    constrained_from: int = 0  # where in `text` the grammar's output begins
    # how far a forced call has come: its tokens the grammar forced, or outside strings and not whitespace
    # (a value's own tokens are not counted: the call's shortest form holds none of them)
    written: int = 0
    string: tuple[bool, bool] = (False, False)  # the reply's text so far, read as JSON: in a string, escaped
    released: int = 0  # characters of `text` already streamed
    logprobs: list[TokenLogprob] = field(default_factory=list)
    released_logprobs: int = 0
    utf8: codecs.IncrementalDecoder = field(init=False)
    rng: np.random.Generator = field(init=False)
    mask: npt.NDArray[np.int32] | None = field(init=False, default=None)  # llguidance's bitmask, made once
    # the model's own log-probabilities at this step, and the top ones, until the chosen token is taken
    pending_logprobs: tuple[npt.NDArray[np.float64], list[TopLogprob]] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.rng = np.random.default_rng(self.settings.seed)
        if self.settings.forced is not None:
            self.matcher = self.grammars.matcher(self.settings.forced)
        self.watching = self.settings.tools is not None and self.matcher is None

    # --- choosing the next token --------------------------------------------------------------------
    def pick(self, logits: npt.NDArray[np.float32]) -> int:
        scores = np.array(logits, dtype=np.float32)  # our own copy: llama.cpp's buffer is reused
        if self.settings.logprobs:
            self.record_logprobs(scores)
        if self.settings.ignore_eos:
            scores[list(self.end_tokens)] = -np.inf
        if self.matcher is not None:
            closing = self.settings.max_tokens - len(self.tokens) <= closing_reserve(self.settings, self.written)
            if self.settings.temperature <= 0 and not closing:
                best = int(np.argmax(scores))
                if self.matcher.validate_tokens([best]) == 1:
                    return best  # the grammar allows the model's own choice: the mask would not change it
            self.apply_mask(scores)
            if closing:  # near the end: close what is open (a masked -inf stays -inf)
                text = self.text[self.constrained_from :]
                scores[list(self.closers.at(text))] += CLOSING_BONUS
                if not in_string(text):
                    scores[list(self.closers.spaces)] -= CLOSING_BONUS
        if self.settings.temperature <= 0:
            return int(np.argmax(scores))
        return self.sample(scores)

    def apply_mask(self, scores: npt.NDArray[np.float32]) -> None:
        """Every token the grammar refuses gets -inf. Computing the mask walks the whole vocabulary (about 10 ms
        on a 150k vocabulary where most tokens are allowed), so a greedy step checks the model's choice first."""
        assert self.matcher is not None
        if self.mask is None:
            self.mask = llguidance.numpy.allocate_token_bitmask(1, self.grammars.tokenizer.vocab_size)
        llguidance.numpy.fill_next_token_bitmask(self.matcher, self.mask, 0)
        llguidance.numpy.apply_token_bitmask_inplace(scores, self.mask)

    def sample(self, scores: npt.NDArray[np.float32]) -> int:
        scaled = scores.astype(np.float64) / self.settings.temperature
        probabilities = np.exp(scaled - scaled.max())
        probabilities /= probabilities.sum()
        if self.settings.top_p < 1.0:
            order = np.argsort(-probabilities)
            keep = np.cumsum(probabilities[order]) - probabilities[order] < self.settings.top_p
            nucleus = np.zeros_like(probabilities)
            nucleus[order[keep]] = probabilities[order[keep]]
            probabilities = nucleus / nucleus.sum()
        return int(self.rng.choice(len(probabilities), p=probabilities))

    def record_logprobs(self, scores: npt.NDArray[np.float32]) -> None:
        """The model's own distribution at this step (before any grammar), for the token about to be chosen."""
        shifted = scores.astype(np.float64) - scores.max()
        logprobs = shifted - np.log(np.exp(shifted).sum())
        top = np.argsort(-logprobs)[: self.settings.top_logprobs]
        self.pending_logprobs = (logprobs, [self.entry(int(t), float(logprobs[t])) for t in top])

    def entry(self, token: int, logprob: float) -> TopLogprob:
        data = self.piece(token)
        return {"token": data.decode("utf-8", errors="replace"), "logprob": logprob, "bytes": list(data)}

    # --- taking a token ------------------------------------------------------------------------------
    def accept(self, token: int) -> list[int]:
        """Take a chosen token; returns the tokens the grammar forces after it (to be evaluated, not sampled)."""
        if self.settings.logprobs and self.pending_logprobs is not None:
            logprobs, top = self.pending_logprobs
            self.logprobs.append({**self.entry(token, float(logprobs[token])), "top_logprobs": top})
        if self.is_end(token):
            self.finish = "stop"
            return []
        self.append(token)
        if self.matcher is not None and not self.matcher.consume_token(token):
            self.finish = "stop"  # cannot happen under the mask; a grammar that breaks ends the reply
        self.watch()
        self.check_limits()
        return self.jump_forward()

    def append(self, token: int, forced: bool = False) -> None:
        self.tokens.append(token)
        piece = self.utf8.decode(b"" if token in self.hidden else self.piece(token))
        if self.settings.call_tokens:
            self.written += forced or (not self.string[0] and bool(piece.strip()))
            self.string = string_state(piece, *self.string)
        self.text += piece
        for word in self.settings.stop if self.matcher is None else ():
            if word in self.text:
                self.text = self.text[: self.text.index(word)]
                self.finish = "stop"

    def watch(self) -> None:
        """Once the reply opens a call, the call grammar takes over, fed every token of the reply so far."""
        if not self.watching or self.finish is not None:
            return
        found = opening(self.text, self.settings.offered)
        form = found.form
        if form == "no" or form == "maybe":
            return
        self.constrained_from = found.at
        assert self.settings.tools is not None
        self.watching = False
        for grammar in (self.settings.tools, replace(self.settings.tools, flexible=True)):
            matcher = self.grammars.matcher(grammar.lark(form))
            if matcher.consume_tokens(self.tokens):
                self.matcher = matcher  # fixed separators force more; the model's own spacing may rule them out
                return

    def check_limits(self) -> None:
        self.check_repeated_call()  # first: a repeat whose closing also ends the grammar is still dropped
        if self.finish is None and self.matcher is not None and self.matcher.is_stopped():
            self.finish = "stop"
        if self.finish is None and len(self.tokens) >= self.settings.max_tokens:
            self.finish = "length"

    def check_repeated_call(self) -> None:
        """With `distinct` tools, the reply ends once its latest whole call repeats an earlier one of the same
        reply to a distinct tool, and the repeat is dropped: a model that starts repeating a call in one reply
        tends to go on repeating it until max_tokens. (A call is whole once its JSON closes, or its closing
        tag, in the tagged form; the model's tokens often run past that point, so the calls are counted.)"""
        if self.finish is not None or not self.settings.distinct or self.matcher is None:
            return
        fresh, self.scanned = self.text[self.scanned :], len(self.text)
        if "}" not in fresh and ">" not in fresh:
            return  # no call closed: the reply is parsed again only when one may have
        calls = parse(self.text[self.constrained_from :], self.settings.offered, partial=True).calls
        if len(calls) <= self.whole_calls:
            return
        self.whole_calls = len(calls)
        latest = (calls[-1].name, calls[-1].arguments)
        if latest[0] in self.settings.distinct and latest in [(c.name, c.arguments) for c in calls[:-1]]:
            self.finish, self.kept_calls = "stop", len(calls) - 1

    def jump_forward(self) -> list[int]:
        if self.finish is not None or self.matcher is None or not self.settings.jump_forward:
            return []
        forced = list(self.matcher.compute_ff_tokens())
        room = self.settings.max_tokens - len(self.tokens)
        forced = forced[:room]
        if not forced:
            return []
        self.matcher.consume_tokens(forced)
        for token in forced:
            self.append(token, forced=True)
            if self.settings.logprobs:
                self.logprobs.append({**self.entry(token, 0.0), "top_logprobs": []})  # forced: certain
        self.forced_count += len(forced)
        self.check_limits()
        return forced

    # --- what may be shown, and the end ------------------------------------------------------------
    def held_from(self) -> int:
        """Where the text that must not be streamed yet begins: a possible stop string, or a possible call."""
        text, end = self.text, len(self.text)
        for word in self.settings.stop:
            end = min(end, len(text) - partial_suffix(text, word))
        if self.settings.offered is None:
            return end
        if self.settings.forced is not None:
            return 0  # the whole reply is a call
        return min(end, opening(text, self.settings.offered).at)

    def release(self, final: Parsed | None = None) -> tuple[str, list[TokenLogprob] | None]:
        """Text that is now safe to stream (and the log-probabilities behind it). At the end (`final`), a reply
        that held no call releases everything it held back."""
        end = self.held_from() if final is None else self.released if final.calls else len(self.text)
        if end <= self.released:
            return "", None
        piece, self.released = self.text[self.released : end], end
        logprobs = None
        if self.settings.logprobs:
            logprobs = self.logprobs[self.released_logprobs :]
            self.released_logprobs = len(self.logprobs)
        return piece, logprobs

    def parsed(self) -> Parsed:
        self.text += self.utf8.decode(b"", final=True)
        if self.settings.offered is None:
            return Parsed(self.text or None)
        cut = self.finish == "length" or self.kept_calls is not None  # the text may end inside a call
        return parse(self.text, self.settings.offered, partial=cut)

    def reply(self, prompt: list[int]) -> tuple[AssistantMessage, FinishReason, Parsed]:
        parsed = self.parsed()
        if self.kept_calls is not None:
            parsed = replace(parsed, calls=parsed.calls[: self.kept_calls])
        calls: list[ToolCall] = [
            {
                "id": call_id(prompt, index),
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
            }
            for index, c in enumerate(parsed.calls)
        ]
        message: AssistantMessage = {"role": "assistant", "content": parsed.content}
        if calls:
            message["tool_calls"] = calls
        finish: FinishReason = "tool_calls" if calls else "length" if self.finish == "length" else "stop"
        return message, finish, parsed


def call_id(prompt: list[int], index: int) -> str:
    """Deterministic (same request, same reply) and unique across a conversation's turns (each prompt differs)."""
    digest = hashlib.sha256(f"{index}:{','.join(map(str, prompt))}".encode()).hexdigest()
    return f"call_{digest[:24]}"
