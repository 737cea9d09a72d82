"""The decoder on a real vocabulary (SmolLM2's), driven by recorded replies of real models in place of logits.

The stand-in model proposes the recorded reply token by token; once the grammar refuses what it proposes,
it proposes whatever closes JSON soonest. Whatever it proposes, a reply that opened a call must end as a
call whose arguments are valid for the tool's schema, and plain text must come out unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import llguidance
import llguidance.numpy
import numpy as np
import pytest

from models.dialects import OPEN
from serve.llama.constraints import Grammars
from serve.llama.decoding import Closers, Decoder, Settings
from serve.llama.engine import Engine

RECORDED = [
    json.loads(line)
    for line in (Path(__file__).parents[2] / "models" / "data" / "replies.jsonl").read_text().splitlines()
]
SCHEMAS: dict[str, Any] = {
    "list_files": {"type": "object", "properties": {}, "additionalProperties": False},
    "read_file": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
}
TOOLS: Any = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMAS.items()]


@pytest.fixture(scope="module")
def engine(smollm2_engine: Engine) -> Engine:
    return smollm2_engine


@pytest.fixture(scope="module")
def grammars(engine: Engine) -> Grammars:
    return Grammars(engine.guidance_tokenizer(), engine.is_special(OPEN))


def closers(engine: Engine) -> np.ndarray:
    """A preference for tokens that end strings and objects soonest."""
    scores = np.zeros(engine.n_vocab, dtype=np.float32)
    for token in range(engine.n_vocab):
        piece = engine.piece(token)
        if piece and set(piece) <= set(b'"}]'):
            scores[token] = 10.0 * piece.count(b'"') + 5.0 * piece.count(b"}") + piece.count(b"]")
    return scores


def drive(engine: Engine, decoder: Decoder, text: str, prefer: np.ndarray, limit: int = 300) -> list[str]:
    """Let the decoder choose each token from logits that favour the recording; returns the streamed pieces."""
    recording, streamed, pending = engine.tokenize(text), [], []
    while decoder.finish is None and len(decoder.tokens) < limit:
        position = len(decoder.tokens)
        on_track = decoder.tokens == recording[:position]
        logits = prefer.copy()
        if on_track:
            logits[recording[position] if position < len(recording) else engine.n_vocab - 1] += 1000
        if on_track and position == len(recording):
            logits[:] = -1e9
            logits[[t for t in range(engine.n_vocab) if engine.is_end(t)]] = 1000
        pending = decoder.accept(decoder.pick(logits))
        streamed.append(decoder.release()[0])
    assert not pending or decoder.finish is not None
    return streamed


CALLS = [r for r in RECORDED if r["expected"]["calls"]]
TEXTS = [r for r in RECORDED if not r["expected"]["calls"] and OPEN not in r["raw"] and "{" not in r["raw"][:3]]


@pytest.mark.parametrize("row", CALLS, ids=[f"{r['model']}-{r['task']}-{r['turn']}" for r in CALLS])
def test_a_recorded_call_comes_out_valid_for_its_schema(engine: Engine, grammars: Grammars, row: Any) -> None:
    settings = Settings(max_tokens=300, tools=grammars.tool_grammar(TOOLS, parallel=True), offered=tuple(SCHEMAS))
    decoder = Decoder(settings, grammars, engine.piece, engine.is_end)
    streamed = drive(engine, decoder, row["raw"], closers(engine))
    message, finish, _ = decoder.reply([1, 2, 3])
    assert finish == "tool_calls", decoder.text
    for call in message["tool_calls"]:
        name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"])
        jsonschema.validate(arguments, SCHEMAS[name])
    assert "".join(streamed) == "" if not message.get("content") else True  # a bare call streams nothing
    assert decoder.forced_count > 0  # the grammar wrote part of it: jump-forward


@pytest.mark.parametrize("row", TEXTS, ids=[f"{r['model']}-{r['task']}-{r['turn']}" for r in TEXTS])
def test_plain_text_comes_out_unchanged_and_is_streamed(engine: Engine, grammars: Grammars, row: Any) -> None:
    settings = Settings(max_tokens=400, tools=grammars.tool_grammar(TOOLS, parallel=True), offered=tuple(SCHEMAS))
    decoder = Decoder(settings, grammars, engine.piece, engine.is_end)
    streamed = drive(engine, decoder, row["raw"], np.zeros(engine.n_vocab, dtype=np.float32), limit=400)
    message, finish, parsed = decoder.reply([1])
    assert decoder.text == engine.detokenize(engine.tokenize(row["raw"]))
    assert "tool_calls" not in message and finish == "stop"
    assert "".join(streamed) + decoder.release(parsed)[0] == decoder.text


def test_only_the_text_before_a_tagged_call_is_streamed(engine: Engine, grammars: Grammars) -> None:
    settings = Settings(max_tokens=200, tools=grammars.tool_grammar(TOOLS, parallel=False), offered=tuple(SCHEMAS))
    decoder = Decoder(settings, grammars, engine.piece, engine.is_end)
    text = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'
    streamed = drive(engine, decoder, text, closers(engine))
    message, finish, _ = decoder.reply([7])
    assert "".join(streamed).strip() == "Let me look." and message["content"] == "Let me look."
    assert finish == "tool_calls" and json.loads(message["tool_calls"][0]["function"]["arguments"]) == {
        "path": "notes.txt"
    }


def test_a_forced_grammar_constrains_from_the_first_token(engine: Engine, grammars: Grammars) -> None:
    calls = grammars.tool_grammar(TOOLS, parallel=False)
    settings = Settings(max_tokens=100, forced=calls.lark("required"), offered=tuple(SCHEMAS))
    decoder = Decoder(settings, grammars, engine.piece, engine.is_end)
    drive(engine, decoder, "I refuse to call anything.", closers(engine))
    message, finish, _ = decoder.reply([1])
    assert finish == "tool_calls" and message["tool_calls"][0]["function"]["name"] in SCHEMAS


@pytest.mark.parametrize("flexible", [False, True], ids=["fixed", "flexible"])
def test_a_forced_call_that_opens_a_fence_and_favours_whitespace_still_ends_as_a_call(
    engine: Engine, grammars: Grammars, flexible: bool
) -> None:
    """A model that opens a code fence and then prefers whitespace above all (what a question in backticks made
    the 0.5B coder do) gets at most 20 whitespace characters between two tokens of a call, so the call closes."""
    calls = replace(grammars.tool_grammar(TOOLS, parallel=True, budget=200), flexible=flexible)
    settings = Settings(max_tokens=200, forced=calls.lark("required"), offered=tuple(SCHEMAS))
    ends = Closers.of(engine.tokens_made_of(b'"}]'), engine.piece, engine.tokens_made_of(b" \t\n\r"))
    decoder = Decoder(settings, grammars, engine.piece, engine.is_end, closers=ends)
    spaces = np.zeros(engine.n_vocab, dtype=np.float32)
    spaces[list(engine.tokens_made_of(b" \t\n"))] = 100.0
    drive(engine, decoder, "```json\n", spaces + closers(engine), limit=200)
    _, finish, _ = decoder.reply([1])
    assert finish == "tool_calls", decoder.text
    assert max(len(run) for run in re.findall(r"\s+", decoder.text)) <= 20 + 2  # a separator's newline beside it


def test_a_stop_string_is_cut_and_never_streamed_in_part(engine: Engine, grammars: Grammars) -> None:
    decoder = Decoder(Settings(max_tokens=100, stop=("END",)), grammars, engine.piece, engine.is_end)
    streamed = drive(engine, decoder, "one two ENDING three", np.zeros(engine.n_vocab, dtype=np.float32))
    assert decoder.text == "one two " and decoder.finish == "stop"
    assert "E" not in "".join(streamed) and "".join(streamed) == "one two "


def test_sampling_with_a_seed_is_repeatable_and_greedy_is_argmax(engine: Engine, grammars: Grammars) -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=engine.n_vocab).astype(np.float32)
    greedy = Decoder(Settings(max_tokens=5), grammars, engine.piece, engine.is_end)
    assert greedy.pick(logits) == int(np.argmax(logits))
    picks = [
        Decoder(
            Settings(max_tokens=5, temperature=1.0, top_p=0.9, seed=42), grammars, engine.piece, engine.is_end
        ).pick(logits)
        for _ in range(2)
    ]
    assert picks[0] == picks[1]


def test_a_call_in_the_models_own_spacing_is_still_constrained(engine: Engine, grammars: Grammars) -> None:
    """A token that runs past the tool name (`","` with no space) rules out the fixed separators; the call is then
    constrained with free whitespace instead of being left as text with arguments the schema forbids."""
    settings = Settings(max_tokens=100, tools=grammars.tool_grammar(TOOLS, parallel=False), offered=tuple(SCHEMAS))
    decoder = Decoder(settings, grammars, engine.piece, engine.is_end)
    drive(engine, decoder, '{"name":"list_files","arguments":{"path":"x"}}', closers(engine))
    message, finish, _ = decoder.reply([1])
    assert finish == "tool_calls" and json.loads(message["tool_calls"][0]["function"]["arguments"]) == {}


def test_a_control_token_the_model_writes_is_left_out_of_the_reply(engine: Engine, grammars: Grammars) -> None:
    """A small model that opens a new turn (`<|im_start|>`) mid-reply: its text is not the reply's, as with
    llama-server; a bare one leaves an empty reply, which a harness can tell from an answer."""
    decoder = Decoder(Settings(max_tokens=50), grammars, engine.piece, engine.is_end, hidden=engine.control_tokens())
    drive(engine, decoder, "Done.<|im_start|>", np.zeros(engine.n_vocab, dtype=np.float32))
    message, finish, _ = decoder.reply([1])
    assert message["content"] == "Done." and finish == "stop" and "<|im_start|>" not in decoder.text
    assert engine.tokenize("<|im_start|>")[0] in engine.control_tokens()


PROSE = 'root ::= [ \\t\\n]* [A-Za-z0-9"] [^\\x00]*'  # a reply that opens with a word (a harness's answer turn)


@pytest.mark.parametrize("grammar", ["prose", "call"])
def test_a_greedy_pick_under_a_grammar_is_the_argmax_of_the_masked_scores(
    engine: Engine, grammars: Grammars, grammar: str
) -> None:
    """Whichever token the model favours, allowed or refused, in every state of a reply: the greedy pick is the
    best token the grammar allows, as if every refused token had been masked out first."""
    forced = grammars.gbnf(PROSE) if grammar == "prose" else grammars.tool_grammar(TOOLS, False).lark("required")
    text = ' "Yes": notes.txt says hi.' if grammar == "prose" else '{"name": "read_file", "arguments": {"path": "a b'
    rng = np.random.default_rng(7)
    ends = [t for t in range(engine.n_vocab) if engine.is_end(t)]
    candidates = [*rng.choice(engine.n_vocab, 300, replace=False), *ends]
    decoder, states = Decoder(Settings(max_tokens=100, forced=forced), grammars, engine.piece, engine.is_end), 0
    while decoder.finish is None and len(decoder.text) < len(text) and text.startswith(decoder.text):
        assert decoder.matcher is not None
        reference = decoder.matcher.deep_copy()
        for favoured in candidates:
            logits = rng.normal(size=engine.n_vocab).astype(np.float32)
            logits[favoured] = 100.0
            masked = logits.copy()
            mask = llguidance.numpy.allocate_token_bitmask(1, engine.n_vocab)
            llguidance.numpy.fill_next_token_bitmask(reference, mask, 0)
            llguidance.numpy.apply_token_bitmask_inplace(masked, mask)
            assert decoder.pick(logits) == int(np.argmax(masked)), (decoder.text, favoured)
        decoder.accept(engine.tokenize(text[len(decoder.text) :])[0])  # the grammar may force more after it
        states += 1
    assert states >= 5 and decoder.text == text, decoder.text


SHAPES = {  # a reply's calls as a small model writes them: the text before, around each call, and after
    "tagged": ("", "<tool_call>\n{}\n</tool_call>\n", ""),
    "bare": ("", "{}\n", ""),
    "list": ("[", "{},\n", "]"),
    "fenced list": ("Reading them.\n```json\n[", "{}, ", "]\n```"),
}


@pytest.mark.parametrize("form", list(SHAPES))
@pytest.mark.parametrize("last", [False, True], ids=["repeat-then-more", "repeat-last"])
def test_a_reply_ends_at_its_first_repeat_of_a_distinct_call_and_drops_it(
    engine: Engine, grammars: Grammars, form: str, last: bool
) -> None:
    """A small model reading files in parallel often writes the same call over and over until max_tokens; with
    `distinct`, the reply ends at the first repeat and keeps the calls before it, in every form a reply's
    calls take (one per tag or line, a JSON list, a fenced list), and also where the repeat is the last call
    (its closing ends the grammar)."""
    call = '{{"name": "read_file", "arguments": {{"path": "{}"}}}}'
    before, shape, after = SHAPES[form]
    paths = "abacd" if not last else "aba"
    text = before + "".join(shape.format(call.format(p)) for p in paths)
    text = (text.rstrip().removesuffix(",") + after).rstrip()
    tools = grammars.tool_grammar(TOOLS, parallel=True)
    replies = {}
    for distinct in (frozenset(), frozenset({"list_files"}), frozenset({"read_file"})):
        settings = Settings(max_tokens=300, tools=tools, offered=tuple(SCHEMAS), distinct=distinct)
        decoder = Decoder(settings, grammars, engine.piece, engine.is_end)
        drive(engine, decoder, text, closers(engine))
        message, finish, _ = decoder.reply([1])
        read = [json.loads(c["function"]["arguments"])["path"] for c in message.get("tool_calls", [])]
        replies[distinct] = (read, finish, decoder.text)
    assert replies[frozenset()][0] == replies[frozenset({"list_files"})][0] == list(paths)
    read, finish, generated = replies[frozenset({"read_file"})]
    assert read == ["a", "b"] and finish == "tool_calls"
    repeat_written = before + "".join(shape.format(call.format(p)) for p in "aba")
    assert len(generated) <= len(repeat_written.rstrip(", \n")) + 4  # nothing past the repeat but a token's spill


FORCED_SCHEMAS: dict[str, Any] = {
    "one path": SCHEMAS["read_file"],
    "six long names": {
        "type": "object",
        "properties": {f"the_{i}th_rather_long_property_name": {"type": "string"} for i in range(6)},
        "required": [f"the_{i}th_rather_long_property_name" for i in range(6)],
    },
    "nested": {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "minItems": 2,
                "items": {
                    "type": "object",
                    "properties": {"old": {"type": "string", "minLength": 3}, "new": {"type": "string"}},
                    "required": ["old", "new"],
                },
            }
        },
        "required": ["edits"],
    },
    "kinds": {
        "type": "object",
        "properties": {
            "mode": {"enum": ["overwrite-everything", "append"]},
            "count": {"type": "integer", "minimum": 5},
            "dry": {"type": "boolean"},
            "note": {"anyOf": [{"type": "string", "minLength": 40}, {"type": "null"}]},
        },
        "required": ["mode", "count", "dry", "note"],
    },
    "refs": {
        "$defs": {"span": {"type": "object", "properties": {"from": {"type": "integer"}, "to": {"type": "integer"}},
                           "required": ["from", "to"]}},
        "type": "object",
        "properties": {"path": {"type": "string"}, "lines": {"$ref": "#/$defs/span"}},
        "required": ["path", "lines"],
    },
}  # fmt: skip


def forced_request(schema: Any, max_tokens: int) -> Any:
    from wire.types import ChatCompletionRequest

    tool = {"type": "function", "function": {"name": "act_on_the_workspace", "parameters": schema}}
    return ChatCompletionRequest.model_validate(
        {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": [tool, *TOOLS],
         "tool_choice": "required", "parallel_tool_calls": True, "max_tokens": max_tokens}
    )  # fmt: skip


def wanderer(engine: Engine, kind: str) -> np.ndarray:
    """Logits of a model that does anything but close a call: whitespace, letters (long values), fences."""
    scores = np.zeros(engine.n_vocab, dtype=np.float32)
    made_of = {"whitespace": b" \t\n", "letters": b"abcdefghij", "fences": b"`json\n ["}[kind]
    scores[list(engine.tokens_made_of(made_of))] = 100.0
    return scores


@pytest.mark.parametrize("kind", ["whitespace", "letters", "fences"])
@pytest.mark.parametrize("name", list(FORCED_SCHEMAS))
def test_a_forced_call_at_any_max_tokens_from_the_floor_ends_as_a_valid_call_within_it(
    engine: Engine, grammars: Grammars, name: str, kind: str
) -> None:
    """`tool_choice: required` makes the reply a call; whatever the model prefers, a call to any of the tools
    offered ends, parses and validates within `max_tokens` from the server's floor up, and below the floor
    the request is a 400 naming `max_tokens` and the floor."""
    from serve.errors import InvalidRequest
    from serve.llama.chat import plan

    schema = FORCED_SCHEMAS[name]
    roomy = plan(forced_request(schema, 4096), grammars, 4096, True)
    with pytest.raises(InvalidRequest) as refused:
        plan(forced_request(schema, 3), grammars, 3, True)
    assert refused.value.param == "max_tokens"
    least = int(re.findall(r"at least (\d+)", refused.value.message)[0])
    assert least > roomy.call_tokens > 0
    with pytest.raises(InvalidRequest):
        plan(forced_request(schema, least - 1), grammars, least - 1, True)
    ends = Closers.of(engine.tokens_made_of(b'"}]'), engine.piece, engine.tokens_made_of(b" \t\n\r"))
    for max_tokens in (least, least + 7, least + 60, least + 300):
        settings = plan(forced_request(schema, max_tokens), grammars, max_tokens, True)
        decoder = Decoder(settings, grammars, engine.piece, engine.is_end, closers=ends)
        prefer = wanderer(engine, kind)
        while decoder.finish is None:
            decoder.accept(decoder.pick(prefer.copy()))
        message, finish, _ = decoder.reply([1])
        assert finish == "tool_calls", (max_tokens, decoder.text)
        assert len(decoder.tokens) <= max_tokens
        for call in message["tool_calls"]:
            offered = {"act_on_the_workspace": schema, **SCHEMAS}[call["function"]["name"]]
            jsonschema.validate(json.loads(call["function"]["arguments"]), offered)
