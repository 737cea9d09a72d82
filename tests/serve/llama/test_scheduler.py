"""The scheduler driven directly, with a fake engine at its engine seam and real Decoders.

The fake engine's next token is a function of what its sequence holds, so a request's reply depends only on
its own cells: a wrong or left-over cell changes it. A failure is injected at each stage of one request's
life (admission, prompt reading, a shared decode call, reading logits, sampling, finishing, delivering);
that request alone gets an error, its sequence is freed, and the others get the replies they get alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from serve.core.backend import Event, Finished, TextOut
from serve.errors import EngineError
from serve.llama.decoding import Decoder, Settings
from serve.llama.engine import Row
from serve.llama.modes import BatchInvariant, Mode, Throughput
from serve.llama.scheduler import Scheduler, Ticket

VOCAB = 64
END = 0
MARK = 63  # the culprit's prompts carry this token
CHUNK = 4
INVARIANT = BatchInvariant(CHUNK, CHUNK, decode_rows=4)


def mode(throughput: bool) -> Mode:
    return Throughput(CHUNK) if throughput else INVARIANT


class Injected(RuntimeError):
    """The fault a test injects."""


@dataclass
class FakeEngine:
    """KV sequences as dicts of position -> token; logits favour one next token, a hash of the sequence so far."""

    context: int = 256
    sequences: int = 4
    batch_size: int = 512
    cells: dict[int, dict[int, int]] = field(default_factory=dict)
    last: list[Row] = field(default_factory=list)
    calls: list[list[Row]] = field(default_factory=list)
    fault: Callable[[str, Sequence[Row], FakeEngine], bool] = lambda stage, rows, engine: False

    def holds_mark(self, sequence: int) -> bool:
        return MARK in self.cells.get(sequence, {}).values()

    def decode(self, rows: Sequence[Row]) -> None:
        if len(rows) > self.batch_size:
            raise EngineError(f"a decode call takes 1 to {self.batch_size} rows, not {len(rows)}")
        for row in rows:  # written first: a failing call may leave cells behind, as a real one could
            self.cells.setdefault(row.sequence, {})[row.position] = row.token
        if self.fault("decode", rows, self):
            raise EngineError("llama_decode failed with status -1")
        self.last = list(rows)
        self.calls.append(self.last)

    def logits(self, index: int) -> npt.NDArray[np.float32]:
        row = self.last[index]
        if self.fault("logits", [row], self):
            raise Injected("logits")
        held = self.cells[row.sequence]
        history = [held[p] for p in range(row.position + 1)]  # a gap is a KeyError: a test failure
        scores = np.zeros(VOCAB, dtype=np.float32)
        scores[1 + (sum(t * (i + 7) for i, t in enumerate(history)) % (VOCAB - 2))] = 1.0
        return scores

    def keep(self, sequence: int, length: int) -> None:
        if self.fault("keep", [], self):
            raise EngineError("keep failed")
        held = self.cells.setdefault(sequence, {})
        for position in [p for p in held if p >= length]:
            del held[position]

    def copy(self, source: int, target: int) -> None:
        if self.fault("copy", [], self):
            raise EngineError("copy failed")
        self.cells[target] = dict(self.cells.get(source, {}))


class FaultyDecoder(Decoder):
    """A real decoder that raises at one stage: `pick`, `accept` (after a few tokens) or `reply`."""

    stage: str = ""

    def pick(self, logits: npt.NDArray[np.float32]) -> int:
        if self.stage == "pick" and len(self.tokens) >= 2:
            raise Injected("pick")
        return super().pick(logits)

    def accept(self, token: int) -> list[int]:
        if self.stage == "accept" and len(self.tokens) >= 1:
            raise Injected("accept")
        return super().accept(token)

    def reply(self, prompt: list[int]) -> Any:
        if self.stage == "reply":
            raise Injected("reply")
        return super().reply(prompt)


def piece(token: int) -> bytes:
    return f"<{token}>".encode()


def decoders(stage: str = "") -> Callable[[Settings], Decoder]:
    """Real decoders; the culprit's (seed 13) fails at `stage` (`make` fails to be made at all)."""

    def make(settings: Settings) -> Decoder:
        if settings.seed != 13 or not stage:
            return Decoder(settings, None, piece, lambda t: t == END)  # type: ignore[arg-type]
        if stage == "make":
            raise Injected("make")
        decoder = FaultyDecoder(settings, None, piece, lambda t: t == END)  # type: ignore[arg-type]
        decoder.stage = stage
        return decoder

    return make


@dataclass
class Outcome:
    events: list[Event | EngineError] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def sink(self, event: Event | EngineError) -> None:
        self.events.append(event)
        if isinstance(event, Finished | EngineError):
            self.done.set()

    @property
    def message(self) -> object:
        last = self.events[-1]
        return last.message if isinstance(last, Finished) else last


PROMPTS = [[5, 6, 7, 8, 9, 10], [11, 12, 13], [21, 22, 23, 24, 25, 26, 27, 28, 29], [31, 32]]
CULPRIT = [MARK, 40, 41, 42, 43]


def submit(scheduler: Scheduler, prompt: list[int], seed: int = 0, sink: Any = None) -> Outcome:
    outcome = Outcome()
    scheduler.submit(Ticket(prompt, Settings(max_tokens=8, seed=seed), sink or outcome.sink))
    return outcome


def served(scheduler: Scheduler, outcomes: list[Outcome]) -> None:
    for outcome in outcomes:
        assert outcome.done.wait(10), "a request was never answered"


def serve_all(scheduler: Scheduler, prompts: list[list[int]]) -> list[Outcome]:
    """Submit every prompt, then start the scheduler and wait for every reply."""
    outcomes = [submit(scheduler, prompt) for prompt in prompts]
    scheduler.start()
    try:
        served(scheduler, outcomes)
    finally:
        scheduler.stop()
    return outcomes


def alone(prompt: list[int]) -> object:
    return alone_message(prompt, max_tokens=8)


def alone_message(prompt: list[int], max_tokens: int) -> object:
    scheduler = Scheduler(FakeEngine(), decoders(), parallel=4, mode=INVARIANT)
    scheduler.start()
    try:
        outcome = Outcome()
        scheduler.submit(Ticket(prompt, Settings(max_tokens=max_tokens), outcome.sink))
        served(scheduler, [outcome])
        return outcome.message
    finally:
        scheduler.stop()


@pytest.fixture(scope="module")
def expected() -> list[object]:
    return [alone(prompt) for prompt in PROMPTS]


def in_decode(rows: Sequence[Row], engine: FakeEngine, after: int) -> bool:
    """A row of the culprit's sequence, `after` or more tokens past its prompt."""
    return any(engine.holds_mark(r.sequence) and r.position >= len(CULPRIT) + after for r in rows)


Fault = Callable[[str, Sequence[Row], FakeEngine], bool]


def once(fault: Fault, fired: list[bool] | None = None) -> Fault:
    """The fault, the first time it is met only (noted in `fired`, when given)."""
    met = [] if fired is None else fired

    def first_time(stage: str, rows: Sequence[Row], engine: FakeEngine) -> bool:
        if met or not fault(stage, rows, engine):
            return False
        met.append(True)
        return True

    return first_time


ENGINE_FAULTS: dict[str, Callable[[], Fault]] = {  # each fails whenever met, but the first (the culprit's admission)
    "keep at admission": lambda: once(lambda stage, rows, engine: stage == "keep"),
    "prompt reading": lambda: lambda stage, rows, engine: stage == "decode" and any(r.token == MARK for r in rows),
    "a shared decode call": lambda: lambda stage, rows, engine: stage == "decode" and in_decode(rows, engine, 2),
    "reading logits": lambda: lambda stage, rows, engine: stage == "logits" and in_decode(rows, engine, 3),
}
DECODER_FAULTS = ["make", "pick", "accept", "reply"]


@pytest.fixture(params=[False, True], ids=["batch-invariant", "throughput"])
def throughput(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def run_with_culprit(
    engine: FakeEngine, stage: str, expected: list[object], throughput: bool, culprit_sink: Any = None
) -> Outcome:
    # time is counted in the engine's calls, so which calls the requests share does not hang on the CPU's load
    clock = lambda: float(len(engine.calls))  # noqa: E731
    scheduler = Scheduler(engine, decoders(stage), parallel=4, mode=mode(throughput), clock=clock)
    culprit = submit(scheduler, CULPRIT, seed=13, sink=culprit_sink)  # first: admitted first
    others = [submit(scheduler, prompt) for prompt in PROMPTS]
    scheduler.start()
    try:
        served(scheduler, others)
        assert [o.message for o in others] == expected
        if culprit_sink is None:
            served(scheduler, [culprit])
        for _ in range(100):  # the culprit's sequence is freed in the step that failed it
            if scheduler.cache.stats()["busy"] == 0:
                break
            threading.Event().wait(0.01)
        assert scheduler.cache.stats()["busy"] == 0 and not scheduler.active
        assert scheduler.fault() is None
        again = submit(scheduler, PROMPTS[0])  # the server goes on, and gives the same reply
        served(scheduler, [again])
        assert again.message == expected[0]
        return culprit
    finally:
        scheduler.stop()


@pytest.mark.parametrize("where", list(ENGINE_FAULTS))
def test_an_engine_failure_in_one_request_fails_it_alone(where: str, expected: list[object], throughput: bool) -> None:
    culprit = run_with_culprit(FakeEngine(fault=ENGINE_FAULTS[where]()), "", expected, throughput)
    assert isinstance(culprit.events[-1], EngineError)


def test_a_shared_call_that_fails_once_is_made_again_and_every_reply_is_its_own(
    expected: list[object], throughput: bool
) -> None:
    """The failed call wrote cells before it failed; they are dropped before each request's call is made again.
    The fault fires in the first decode call that holds the culprit past its second token beside another
    request: which call that is depends on how the requests' prompt reading interleaved (fairness is by time
    spent, counted here in calls), and a call holding the culprit alone would fail it alone, as it should."""
    culprits = ENGINE_FAULTS["a shared decode call"]()
    fired: list[bool] = []
    fault = once(
        lambda stage, rows, engine: len({r.sequence for r in rows}) > 1 and culprits(stage, rows, engine), fired
    )
    culprit = run_with_culprit(FakeEngine(fault=fault), "", expected, throughput)
    assert fired, "no decode call held the culprit beside another request"
    assert culprit.message == alone(CULPRIT)


@pytest.mark.parametrize("stage", DECODER_FAULTS)
def test_a_decoder_failure_in_one_request_fails_it_alone(stage: str, expected: list[object], throughput: bool) -> None:
    culprit = run_with_culprit(FakeEngine(), stage, expected, throughput)
    error = culprit.events[-1]
    assert isinstance(error, EngineError) and "Injected" in str(error)


def test_a_request_whose_client_is_gone_is_dropped_and_frees_its_sequence(
    expected: list[object], throughput: bool
) -> None:
    taken: list[Event | EngineError] = []

    def gone(event: Event | EngineError) -> None:
        taken.append(event)
        if isinstance(event, TextOut):
            raise RuntimeError("Event loop is closed")

    run_with_culprit(FakeEngine(), "", expected, throughput, culprit_sink=gone)
    assert isinstance(taken[0], TextOut)


def kinds_per_call(throughput: bool, batch_size: int = 512) -> tuple[list[object], list[set[str]]]:
    """Serve every prompt at once; each request's reply, and which kinds of rows each call held."""
    engine = FakeEngine(batch_size=batch_size)
    outcomes = serve_all(Scheduler(engine, decoders(), parallel=4, mode=mode(throughput)), PROMPTS)
    starts = [row for call in engine.calls for row in call if row.position == 0]
    lengths = {row.sequence: len(p) for row in starts for p in PROMPTS if p[0] == row.token}
    kinds = [{"prompt" if r.position < lengths[r.sequence] else "decode" for r in call} for call in engine.calls]
    return [o.message for o in outcomes], kinds


def test_batch_invariant_calls_never_mix_prompt_rows_with_decode_rows(expected: list[object]) -> None:
    replies, kinds = kinds_per_call(throughput=False)
    assert replies == expected
    assert all(len(kind) == 1 for kind in kinds)


def test_in_throughput_mode_prompt_rows_share_calls_with_decode_rows(expected: list[object]) -> None:
    replies, kinds = kinds_per_call(throughput=True)
    assert replies == expected
    assert any(kind == {"prompt", "decode"} for kind in kinds)


def test_no_call_exceeds_the_engine_s_batch(expected: list[object], throughput: bool) -> None:
    """The fake engine refuses a call of more rows than its batch, as llama.cpp's does."""
    replies, _ = kinds_per_call(throughput, batch_size=3)
    assert replies == expected


def test_batch_invariant_prompt_calls_start_at_multiples_of_their_size_and_only_the_tail_is_smaller() -> None:
    """Every call reading a prompt has the chunk's size or a power of two from the granularity up and starts at a
    multiple of its own size, and the prompt's last (length mod g) tokens come alone: the shapes the start-up
    probe checked. A second request sharing 13 tokens reuses 12 of them, whatever was cached past that."""
    engine = FakeEngine()
    scheduler = Scheduler(engine, decoders(), parallel=4, mode=BatchInvariant(8, 2))
    first, second = list(range(1, 22)), [*range(1, 14), *range(40, 50)]
    scheduler.start()
    try:
        served(scheduler, [submit(scheduler, first)])
        engine.calls.clear()
        outcome = submit(scheduler, second)
        served(scheduler, [outcome])
    finally:
        scheduler.stop()
    last = outcome.events[-1]
    assert isinstance(last, Finished) and last.timings is not None and last.timings.cache_n == 12
    reading = [call for call in engine.calls if call[0].position < len(second)]
    assert [(call[0].position, len(call)) for call in reading] == [(12, 4), (16, 4), (20, 2), (22, 1)]


@dataclass
class CopyingEngine(FakeEngine):
    """Favours the token that followed the latest earlier occurrence of the last two tokens, so replies copy
    from their prompts as real ones quote files; otherwise the hash."""

    def logits(self, index: int) -> npt.NDArray[np.float32]:
        scores = super().logits(index)
        row = self.last[index]
        held = self.cells[row.sequence]
        history = [held[p] for p in range(row.position + 1)]
        for start in range(len(history) - 3, -1, -1):
            if history[start : start + 2] == history[-2:]:
                scores[:] = 0.0
                scores[history[start + 2]] = 1.0
                break
        return scores


def drafted_run(draft: int) -> tuple[list[object], list[Finished], CopyingEngine, Scheduler]:
    engine = CopyingEngine()
    scheduler = Scheduler(engine, decoders(), parallel=4, mode=INVARIANT, draft=draft)
    prompts = [[5, 6, 7, 8, 9, 10, 11, 12, 5, 6], [11, 12, 13, 14, 15, 11, 12], [21, 22, 23, 24, 25, 26, 22, 23]]
    outcomes = serve_all(scheduler, prompts)
    finished = [o.events[-1] for o in outcomes if isinstance(o.events[-1], Finished)]
    return [o.message for o in outcomes], finished, engine, scheduler


def test_drafted_guesses_the_model_confirms_are_kept_and_the_reply_is_the_one_without_drafting() -> None:
    plain, _, _, _ = drafted_run(draft=0)
    replies, finished, engine, scheduler = drafted_run(draft=3)
    assert replies == plain and len(finished) == 3
    timings = [f.timings for f in finished if f.timings is not None]
    assert len(timings) == len(finished)
    drafted = sum(t.draft_n or 0 for t in timings)
    accepted = sum(t.draft_n_accepted or 0 for t in timings)
    assert 0 < accepted <= drafted
    for cached in scheduler.cache.held:  # every cell a rejected guess wrote is gone; the sequence knows what it holds
        held = engine.cells.get(cached.sequence, {})
        assert [held[p] for p in sorted(held)] == cached.tokens


def test_health_says_not_ok_when_work_waits_and_nothing_moves() -> None:
    stuck = threading.Event()

    def hang(stage: str, rows: Sequence[Row], engine: FakeEngine) -> bool:
        if stage == "decode":
            stuck.wait(5)
        return False

    scheduler = Scheduler(FakeEngine(fault=hang), decoders(), parallel=4, mode=INVARIANT, stall_s=0.2)
    submit(scheduler, PROMPTS[0])
    scheduler.start()
    try:
        threading.Event().wait(0.5)
        fault = scheduler.fault()
        assert fault is not None and "no progress" in fault
    finally:
        stuck.set()
        scheduler.stop()
    assert scheduler.fault() == "the server is stopping"


@dataclass
class TimedEngine(FakeEngine):
    """Each call costs time on a clock of its own: a part for the call and a part per row, as on a CPU."""

    now: float = 0.0

    def decode(self, rows: Sequence[Row]) -> None:
        super().decode(rows)
        self.now += CALL_COST + ROW_COST * len(rows)


CALL_COST, ROW_COST = 1.0, 0.5
LONG = [[*range(1, 61)], [*range(2, 62)]]  # 15 prompt calls each


def stepped(throughput: bool) -> tuple[TimedEngine, Scheduler]:
    engine = TimedEngine()
    return engine, Scheduler(engine, decoders(), parallel=4, mode=mode(throughput), clock=lambda: engine.now)


def step_until(scheduler: Scheduler, done: Callable[[], bool], most: int = 500) -> int:
    for steps in range(1, most + 1):
        scheduler.step()
        if done():
            return steps
    raise AssertionError(f"not done in {most} steps")


def test_a_short_prompt_behind_long_ones_is_read_at_once_and_every_reply_is_its_own(throughput: bool) -> None:
    """Reading is shared: the request that has had the least reading time goes next, so a 3-token prompt that
    arrives while two 60-token prompts are being read gets its first token within two steps, not after them."""
    _, scheduler = stepped(throughput)
    long = [submit(scheduler, prompt) for prompt in LONG]
    for _ in range(3):
        scheduler.step()
    short = submit(scheduler, PROMPTS[1])
    assert step_until(scheduler, lambda: bool(short.events)) <= 2
    step_until(scheduler, lambda: all(o.done.is_set() for o in [*long, short]))
    assert [o.message for o in [*long, short]] == [alone(prompt) for prompt in [*LONG, PROMPTS[1]]]


def test_a_decoding_request_keeps_half_its_pace_while_long_prompts_are_read(throughput: bool) -> None:
    """While prompts are read beside a decoding request, calls that read get no more time than calls that only
    decode, so each of its tokens costs at most about twice what it costs alone."""
    engine, scheduler = stepped(throughput)
    decoding = Outcome()
    scheduler.submit(Ticket(PROMPTS[3], Settings(max_tokens=200), decoding.sink))
    step_until(scheduler, lambda: bool(decoding.events))  # its prompt read: it decodes from here on
    readers = [submit(scheduler, prompt) for prompt in LONG]
    began, tokens = engine.now, len(decoding.events)
    step_until(scheduler, lambda: all(o.events for o in readers))
    spent, made = engine.now - began, len(decoding.events) - tokens
    alone_cost, prompt_call = CALL_COST + ROW_COST, CALL_COST + ROW_COST * (CHUNK + 1)
    assert made > 10 and spent <= 2 * alone_cost * made + prompt_call
    step_until(scheduler, lambda: decoding.done.is_set())
    scheduler.stop()
    assert decoding.message == alone_message(PROMPTS[3], max_tokens=200)
    assert [o.message for o in readers] == [alone(prompt) for prompt in LONG]
