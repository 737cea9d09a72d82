"""Continuous batching: up to `parallel` requests decode together, one llama_decode call per step.

One thread owns the engine. Each step it admits waiting requests into free KV sequences, evaluates the
next rows of every live request, and closes every request that ended, in that order (llama.cpp's server
walks its slots' states the same way in `update_slots`). Each request holds its phase (`Active`: reading,
decoding, checking, done, failed), and `close` is the one place a request leaves. The calls are made in
one of two ways:

- batch invariant (the default): the next aligned call (at most a chunk) of one request still reading
  its prompt, each jump-forward run in a call of its own, and one token of every other decoding request in
  shared calls of at most the measured `decode_rows` rows. Calls never mix prompt rows with decode rows: a
  request's greedy reply is then the same alone or beside others, and the same whether its prefix came
  from the cache or not (see modes.py for the call plan and probe.py for what is measured).
- throughput: every decoding request's rows and as much prompt as the call has room for, in one call, as
  llama-server does; with llama.cpp's fastest kernels (see the engine) a reply may then depend on what else
  was running.

Reading is shared fairly. Of the requests reading their prompts, the one that has had the least reading
time goes next (in throughput mode, first into the call's room), so a short prompt that arrives behind
long ones is read at once rather than after them. And while some requests decode, calls that read
prompts get no more time than calls that only decode (`Share`): reading waits while it is ahead, so a
decoding request keeps about half its pace or more whatever is being read (in throughput mode too, where
a shared call of a chunk of prompt rows can take seconds on a CPU).

A failure is the failing request's alone: whatever goes wrong while one request is admitted, read,
decoded or finished (in llama.cpp, in its grammar, in its sampling, or in delivering its events), that
request gets an error, its sequence is forgotten and freed, and the others go on as if it had never been
there. A shared decode call that fails is made again one request at a time, so only the request whose own
call fails is lost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from serve.core.backend import Event, Finished, TextOut
from serve.errors import EngineError
from serve.llama.decoding import Decoder, Settings
from serve.llama.drafting import lookup
from serve.llama.engine import Row
from serve.llama.modes import BatchInvariant, Mode, Throughput
from serve.llama.prompt_cache import CachedSequence, PromptCache
from serve.llama.threads import start_thread
from wire.types import Timings, usage_of

log = logging.getLogger(__name__)
DECODE_ROWS = 4  # the most decode rows of different requests the probe is asked to check for one call
# throughput mode, while requests decode: prompt rows per call, so that a call (and the decoding that follows
# to even the time out) stays short enough for a newcomer's first token to come soon
CONTENDED_ROWS = 64
STALL_S = 60.0  # work in flight and nothing done for this long: the scheduler is not making progress
Sink = Callable[[Event | EngineError], None]


class KVEngine(Protocol):
    """What the scheduler needs of an engine: KV sequences, and decode calls whose logits it reads."""

    @property
    def context(self) -> int: ...

    @property
    def sequences(self) -> int: ...

    @property
    def batch_size(self) -> int: ...

    def decode(self, rows: Sequence[Row]) -> None: ...

    def logits(self, index: int) -> npt.NDArray[np.float32]: ...

    def keep(self, sequence: int, length: int) -> None: ...

    def copy(self, source: int, target: int) -> None: ...


@dataclass
class Ticket:
    """A submitted request: its prompt, what it asks, where its events go, and a way to call it off."""

    prompt: list[int]
    settings: Settings
    sink: Sink
    cancelled: threading.Event = field(default_factory=threading.Event)
    on_finish: Callable[[Finished, int], None] | None = None  # (finished, malformed tool calls seen)

    def cancel(self) -> None:
        self.cancelled.set()


Phase = Literal["reading", "decoding", "checking", "done", "failed"]
LIVE: tuple[Phase, ...] = ("reading", "decoding", "checking")


@dataclass
class Active:
    """A request that holds a KV sequence, in one phase at a time:

    - reading: its prompt is being read (`position` is short of the prompt's end);
    - decoding: it has chosen its next tokens (`pending`: one, or a jump-forward run) for the next call;
    - checking: this step checks drafted `guesses` after its pending token, in a call of its own;
    - done: its decoder has finished (stop, length, cancelled); the step's last pass sends the reply;
    - failed: something went wrong for it alone (`error`); the step's last pass sends the error.

    Only `Scheduler.close` takes a request out of the scheduler, once, at the end of a step."""

    ticket: Ticket
    decoder: Decoder
    cached: CachedSequence  # the KV sequence it runs in
    reuse: int
    position: int  # the next cell of the sequence to write
    phase: Phase = "reading"
    error: BaseException | None = None
    pending: list[int] = field(default_factory=list)  # tokens chosen but not yet evaluated
    guesses: list[int] = field(default_factory=list)  # drafted tokens to check after the pending one
    drafted: int = 0
    accepted: int = 0
    prompt_ms: float = 0.0
    cache_ms: float = 0.0
    began: float = field(default_factory=time.perf_counter)
    first_token_at: float | None = None

    @property
    def live(self) -> bool:
        return self.phase in LIVE

    def chose(self, tokens: list[int]) -> None:
        """The decoder's choice after a row's logits: the next tokens to evaluate, or the end of the reply."""
        self.pending = tokens
        self.phase = "done" if self.decoder.finish is not None else "decoding"

    def failed(self, exc: BaseException) -> None:
        if self.phase != "failed":  # the first error is the one the client gets
            self.phase, self.error = "failed", exc


@dataclass
class Share:
    """Seconds spent reading prompts and decoding since both kinds of work began to wait together."""

    prompt_s: float = 0.0
    decode_s: float = 0.0

    def reading_turn(self) -> bool:
        return self.prompt_s <= self.decode_s


class Scheduler:
    def __init__(
        self,
        engine: KVEngine,
        make_decoder: Callable[[Settings], Decoder],
        *,
        parallel: int,
        mode: Mode,
        prompt_cache: bool = True,
        draft: int = 0,
        stack_bytes: int = 0,
        stall_s: float = STALL_S,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.engine, self.make_decoder = engine, make_decoder
        self.parallel, self.mode = parallel, mode
        self.draft = draft  # tokens guessed by prompt lookup per check (0: no drafting)
        self.cache = PromptCache(engine.sequences, mode, reuse=prompt_cache, working=parallel)
        self.waiting: deque[Ticket] = deque()
        self.active: list[Active] = []
        self.wakeup = threading.Condition()
        self.stopping = False
        self.stack_bytes, self.stall_s = stack_bytes, stall_s
        self.thread: threading.Thread | None = None
        self.steps = self.decode_calls = self.failures = 0
        self.progress_at = time.monotonic()
        self.clock, self.share = clock, Share()
        self.reading_rows = mode.chunk  # prompt rows a call may hold (fewer in throughput mode while others decode)

    def start(self) -> None:
        self.thread = start_thread(self.loop, "llama-scheduler", self.stack_bytes)

    def stop(self) -> None:
        with self.wakeup:
            self.stopping = True
            self.wakeup.notify()
        if self.thread is not None:
            self.thread.join(timeout=30)

    def submit(self, ticket: Ticket) -> Ticket:
        with self.wakeup:
            self.waiting.append(ticket)
            self.wakeup.notify()
        return ticket

    def queue_depth(self) -> int:
        return len(self.waiting)

    def fault(self) -> str | None:
        """Why the scheduler cannot serve, if it cannot: its thread is gone, or work waits and nothing moves."""
        if self.stopping:
            return "the server is stopping"
        if self.thread is None or not self.thread.is_alive():
            return "the scheduler thread has stopped"
        idle = time.monotonic() - self.progress_at
        in_flight = len(self.waiting) + len(self.active)
        if in_flight and idle > self.stall_s:
            return f"no progress for {idle:.0f} s with {in_flight} requests in flight"
        return None

    # --- the loop ------------------------------------------------------------------------------------
    def loop(self) -> None:
        while True:
            with self.wakeup:
                while not self.stopping and not self.waiting and not self.active:
                    self.wakeup.wait()
                    self.progress_at = time.monotonic()  # idle is not stalled
                if self.stopping:
                    self.fail_all(EngineError("the server is stopping"))
                    return
            try:
                self.step()
            except Exception as exc:  # a bug outside any one request: those in flight get an error, the rest go on
                log.exception("the scheduler failed a step")
                self.fail_all(EngineError(f"internal error in the scheduler: {type(exc).__name__}: {exc}"))

    def fail_all(self, error: EngineError) -> None:
        for active in self.active:
            active.failed(error)
        self.close_ended()
        with self.wakeup:
            waiting, self.waiting = list(self.waiting), deque()
        for ticket in waiting:
            deliver(ticket, error)

    def step(self) -> None:
        """Admit, evaluate every live request's next rows, and close every request that ended."""
        self.steps += 1
        self.drop_cancelled()
        self.admit()
        self.run_calls()
        self.close_ended()

    def run_calls(self) -> None:
        """This step's calls. While requests decode beside ones reading, a call that reads prompts is made only
        on reading's turn (`Share`), holds at most CONTENDED_ROWS prompt rows (throughput mode), and counts as
        reading time; one of decode rows only counts as decoding time."""
        self.end_at_context()
        checks = self.drafted()
        contended = bool(self.in_phase("reading")) and bool(self.in_phase("decoding") or checks)
        if not contended:
            self.share = Share()  # nothing to share: the next contention starts even
        reading = not contended or self.share.reading_turn()
        self.reading_rows = min(self.mode.chunk, CONTENDED_ROWS) if contended else self.mode.chunk
        mode = self.mode
        calls = self.shared_calls(reading) if isinstance(mode, Throughput) else self.invariant_calls(mode, reading)
        for group in calls:
            reads = any(a.phase == "reading" for a in group)
            took = self.timed(group, self.evaluate)
            if reads:
                self.share.prompt_s += took
            else:
                self.share.decode_s += took
        for active in checks:
            self.share.decode_s += self.timed([active], self.verify)

    def timed(self, group: list[Active], work: Callable[[list[Active]], None]) -> float:
        began = self.clock()
        self.guarded(group, work)
        return self.clock() - began

    def next_reader(self) -> Active | None:
        """The request reading its prompt that has had the least reading time (the oldest of equals)."""
        return min(self.in_phase("reading"), key=lambda a: a.prompt_ms, default=None)

    def in_phase(self, phase: Phase) -> list[Active]:
        return [a for a in self.active if a.phase == phase]

    def drafted(self) -> list[Active]:
        """The decoding requests with a guess to check this step (each then gets a call of its own)."""
        if not self.draft:
            return []
        found = []
        for active in (a for a in self.in_phase("decoding") if len(a.pending) == 1):
            guesses = lookup([*active.ticket.prompt, *active.decoder.tokens], self.guess_room(active))
            if guesses:
                active.guesses, active.phase = guesses, "checking"
                found.append(active)
        return found

    def guess_room(self, active: Active) -> int:
        decoder = active.decoder
        return min(
            self.draft,
            decoder.settings.max_tokens - len(decoder.tokens),
            self.engine.context - active.position - 1,
            self.engine.batch_size - 1,
        )

    def end_at_context(self) -> None:
        """A decoding request whose pending tokens would not fit the context ends at length."""
        for active in self.in_phase("decoding"):
            if active.position + len(active.pending) > self.engine.context:
                active.decoder.finish, active.phase = "length", "done"

    def invariant_calls(self, mode: BatchInvariant, reading: bool = True) -> list[list[Active]]:
        """The next aligned prompt call of `next_reader` (when `reading`), each jump-forward run alone, and
        single tokens in calls of at most the mode's decode rows: a row's numbers depend on its own sequence only."""
        reader = self.next_reader() if reading else None
        decoding = self.in_phase("decoding")
        runs = [[a] for a in decoding if len(a.pending) > 1]
        # In sequence order: llama.cpp splits a batch whose sequences come out of order into several ubatches
        # (one pass over the weights each), which made a 4-row step cost 75-95 ms instead of 55 here.
        singles = sorted((a for a in decoding if len(a.pending) == 1), key=lambda a: a.cached.sequence)
        size = min(mode.decode_rows, self.engine.batch_size)
        batches = [singles[first : first + size] for first in range(0, len(singles), size)]
        return ([[reader]] if reader is not None else []) + runs + batches

    def shared_calls(self, reading: bool = True) -> list[list[Active]]:
        """Throughput: every decoding request's rows and (when `reading`), fairest first, as much prompt as the
        call has room for (`evaluate` gives a reader past the room no rows), in one call (llama-server's way);
        a run too long to share the call gets calls of its own."""
        shared: list[Active] = []
        alone: list[list[Active]] = []
        rows = 0
        for active in sorted(self.in_phase("decoding"), key=lambda a: a.cached.sequence):
            if rows + len(active.pending) <= self.engine.batch_size:
                shared.append(active)
                rows += len(active.pending)
            else:
                alone.append([active])
        if reading:
            shared += sorted(self.in_phase("reading"), key=lambda a: a.prompt_ms)  # least read first, then oldest
        return ([shared] if shared else []) + alone

    def prompt_room(self, group: Sequence[Active]) -> int:
        """How many prompt rows a call may add to the decode rows of this group."""
        decode_rows = sum(len(a.pending) for a in group if a.phase != "reading")
        return min(self.reading_rows, self.engine.batch_size - decode_rows)

    def guarded(self, group: list[Active], work: Callable[[list[Active]], None]) -> None:
        """Run one evaluation; if it fails, a lone request fails, and a shared call is made again one request
        at a time (after dropping whatever the failed call may have written), so only its culprit fails."""
        try:
            work(group)
        except Exception as exc:
            if len(group) == 1:
                group[0].failed(exc)
                return
            for active in group:
                self.engine.keep(active.cached.sequence, active.position)
            for active in group:
                if active.live:
                    self.guarded([active], work)

    def admit(self) -> None:
        while self.waiting and len(self.active) < self.parallel:
            with self.wakeup:
                ticket = self.waiting[0]
                plan = self.cache.plan(ticket.prompt)
                if plan is None:
                    return
                self.waiting.popleft()
            try:
                if not ticket.prompt:
                    raise EngineError("a request has an empty prompt")
                decoder = self.make_decoder(ticket.settings)  # before any sequence is touched
            except Exception as exc:
                self.refuse(ticket, exc)
                continue
            began = time.perf_counter()
            cached = self.cache.take(plan)
            active = Active(ticket, decoder, cached, plan.reuse, plan.reuse)
            self.active.append(active)
            try:
                if plan.keep_in is not None:
                    self.engine.copy(cached.sequence, plan.keep_in.sequence)
                if plan.copy_from is not None:
                    self.engine.copy(plan.copy_from.sequence, cached.sequence)
                self.engine.keep(cached.sequence, plan.reuse)
            except Exception as exc:
                if plan.keep_in is not None:
                    self.cache.forget(plan.keep_in)  # its copy may be partial
                active.failed(exc)
                continue
            active.cache_ms = (time.perf_counter() - began) * 1000
            self.progress_at = time.monotonic()

    def drop_cancelled(self) -> None:
        with self.wakeup:
            for ticket in [t for t in self.waiting if t.cancelled.is_set()]:
                self.waiting.remove(ticket)  # it left while queued: no prefill for nobody
        for active in self.active:
            if active.live and active.ticket.cancelled.is_set():
                active.decoder.finish, active.phase = "cancelled", "done"

    # --- evaluation ----------------------------------------------------------------------------------
    def evaluate(self, group: list[Active]) -> None:
        """The next rows of each request in the group (part of its prompt, or its pending tokens) in one call;
        then each request whose prompt is read, or that decoded, chooses its next token. Only the call itself
        may raise: what happens after it is each request's own."""
        rows: list[Row] = []
        parts: list[tuple[Active, list[int], int | None]] = []  # (request, tokens evaluated, its logits row)
        room = self.prompt_room(group)
        for active in group:
            tokens, wanted = self.next_rows(active, room)
            start, sequence = active.position, active.cached.sequence
            room -= len(tokens) if active.phase == "reading" else 0
            rows += [Row(t, start + i, sequence, logits=start + i == wanted) for i, t in enumerate(tokens)]
            if tokens:
                parts.append((active, tokens, len(rows) - 1 if start + len(tokens) - 1 == wanted else None))
        offset, spent = 0, 0.0
        if rows:
            began = self.clock()
            offset = self.call(rows)
            spent = (self.clock() - began) * 1000
        for active, tokens, index in parts:
            active.cached.tokens.extend(tokens)
            active.position += len(tokens)
            if active.phase == "reading":
                active.prompt_ms += spent
                read = active.position >= len(active.ticket.prompt)
                active.first_token_at = time.perf_counter() if read else None
            if index is not None:
                self.alone(active, self.choose, index - offset)

    def next_rows(self, active: Active, room: int) -> tuple[list[int], int]:
        """The tokens this call evaluates for a request, and the position whose logits it needs."""
        start, prompt = active.position, active.ticket.prompt
        if active.phase == "reading":
            return prompt[start : self.mode.prompt_end(start, len(prompt), room)], len(prompt) - 1
        return active.pending, start + len(active.pending) - 1

    def alone(self, active: Active, work: Callable[[Active, int], None], row: int) -> None:
        try:
            work(active, row)
        except Exception as exc:
            active.failed(exc)

    def call(self, rows: list[Row]) -> int:
        """Evaluate rows in calls of at most the engine's batch (a long jump-forward run takes several); returns
        where the last call began, since logits are read from the last call only."""
        first = 0
        for first in range(0, len(rows), self.engine.batch_size):
            self.decode_calls += 1
            self.engine.decode(rows[first : first + self.engine.batch_size])
            self.progress_at = time.monotonic()
        return first

    def verify(self, group: list[Active]) -> None:
        """The pending token and the guesses after it, in one call; the guesses the model chooses itself, up to
        the first it would not, are kept (their cells too), and the rest of their cells are dropped."""
        active = group[0]
        guesses, active.guesses = active.guesses, []
        tokens, start, sequence = [*active.pending, *guesses], active.position, active.cached.sequence
        self.call([Row(t, start + i, sequence, logits=True) for i, t in enumerate(tokens)])
        kept, chosen = 0, active.pending
        for index in range(len(tokens)):
            kept = index + 1
            chosen = self.take(active, index)
            if index == len(guesses) or chosen != [guesses[index]]:
                break
        active.cached.tokens.extend(tokens[:kept])
        active.position = start + kept
        active.drafted += len(guesses)
        active.accepted += kept - 1
        self.engine.keep(sequence, active.position)
        active.chose(chosen)

    def choose(self, active: Active, row: int) -> None:
        active.chose(self.take(active, row))

    def take(self, active: Active, row: int) -> list[int]:
        """The request's next token from a row's logits, and what the grammar forces after it (none once the
        reply is over); its text goes to the client."""
        decoder = active.decoder
        token = decoder.pick(self.engine.logits(row))
        forced = decoder.accept(token)
        text, logprobs = decoder.release()
        if text:
            deliver(active.ticket, TextOut(text, logprobs))
        return [] if decoder.finish is not None else [token, *forced]

    # --- the end of a request --------------------------------------------------------------------------
    def close_ended(self) -> None:
        """The step's last pass: every request that is done or failed is closed, in the order it came."""
        for active in [a for a in self.active if not a.live]:
            self.close(active)

    def close(self, active: Active) -> None:
        """The one way out: a done request's reply is sent and its cells kept for reuse; a failed one (or one
        whose reply cannot be made) gets its error, and its sequence is emptied and forgotten."""
        if active.phase == "done":
            try:
                self.send_reply(active)
            except Exception as exc:
                active.failed(exc)
        self.active.remove(active)
        if active.phase == "done":
            self.cache.release(active.cached, len(active.ticket.prompt))
        else:
            self.discard(active)
        self.progress_at = time.monotonic()

    def send_reply(self, active: Active) -> None:
        decoder, ticket = active.decoder, active.ticket
        message, finish, parsed = decoder.reply(ticket.prompt)
        text, logprobs = decoder.release(parsed)
        if text:
            deliver(ticket, TextOut(text, logprobs))
        ended = time.perf_counter()
        first = active.first_token_at or ended
        predicted_ms = (ended - first) * 1000
        generated = len(decoder.tokens)
        timings = Timings(
            cache_n=active.reuse,
            prompt_n=len(ticket.prompt) - active.reuse,
            prompt_ms=round(active.prompt_ms, 3),
            prompt_per_second=rate(len(ticket.prompt) - active.reuse, active.prompt_ms),
            predicted_n=generated,
            predicted_ms=round(predicted_ms, 3),
            predicted_per_second=rate(generated, predicted_ms),
            cache_ms=round(active.cache_ms, 3),
            draft_n=active.drafted if self.draft else None,
            draft_n_accepted=active.accepted if self.draft else None,
        )
        usage = usage_of(len(ticket.prompt), generated, active.reuse)
        finished = Finished(message, finish, usage, timings, decoder.logprobs if decoder.settings.logprobs else None)
        if ticket.on_finish is not None:
            ticket.on_finish(finished, parsed.malformed)
        deliver(ticket, finished)

    def discard(self, active: Active) -> None:
        """A failed request: the error goes to it alone; its sequence is emptied, forgotten and freed."""
        self.report(
            active.ticket, active.error or EngineError("the request failed"), "a request failed in the scheduler"
        )
        self.cache.forget(active.cached)
        try:
            self.engine.keep(active.cached.sequence, 0)
        except Exception:  # the sequence is forgotten either way: nothing will reuse its cells
            log.exception("emptying sequence %d failed", active.cached.sequence)

    def refuse(self, ticket: Ticket, exc: BaseException) -> None:
        """A request that failed before it took a sequence."""
        self.report(ticket, exc, "a request could not be admitted")
        self.progress_at = time.monotonic()

    def report(self, ticket: Ticket, exc: BaseException, what: str) -> None:
        """A request's error, counted and sent to it; a fault that is not the engine's own is logged."""
        self.failures += 1
        if not isinstance(exc, EngineError):
            log.error(what, exc_info=exc)
        deliver(ticket, engine_error(exc))


def deliver(ticket: Ticket, event: Event | EngineError) -> None:
    """Hand an event to the request's sink; a sink that cannot take it (its client or loop is gone) ends it."""
    try:
        ticket.sink(event)
    except Exception:
        ticket.cancel()


def engine_error(exc: BaseException) -> EngineError:
    return exc if isinstance(exc, EngineError) else EngineError(f"{type(exc).__name__}: {exc}")


def rate(count: int, ms: float) -> float:
    return round(count / ms * 1000, 3) if ms > 0 else 0.0
