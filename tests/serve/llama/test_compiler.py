"""The compile process on SmolLM2's real vocabulary: what would crash or stall the server is refused instead."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from models.registry import SMOLLM2
from models.weights import locate
from serve.errors import InvalidRequest
from serve.llama.compiler import MAX_GBNF_RULES, Compiler


def lark_chain(rules: int) -> str:
    """Each rule refers to the next: llguidance recurses once per rule (about 3,000 overflow an 8 MB stack)."""
    return "start: r0\n" + "".join(f'r{i}: "a" r{i + 1}\n' for i in range(rules)) + f'r{rules}: "b"\n'


def gbnf_chain(rules: int) -> str:
    return "root ::= r0\n" + "".join(f'r{i} ::= "a" r{i + 1}\n' for i in range(rules)) + f'r{rules} ::= "b"\n'


@pytest.fixture(scope="module")
def compiler() -> Iterator[Compiler]:
    started = Compiler(locate(SMOLLM2))
    started.start()
    yield started
    started.close()


def test_a_grammar_that_crashes_the_compiler_is_refused_and_the_next_one_compiles(compiler: Compiler) -> None:
    with pytest.raises(InvalidRequest, match="made the grammar compiler fail"):
        compiler.lark(lark_chain(6000))
    assert compiler.restarts == 1
    assert compiler.lark(lark_chain(100)).lark.startswith("start: r0")


def test_a_gbnf_grammar_is_converted_and_checked(compiler: Compiler) -> None:
    assert "start" in compiler.gbnf('root ::= "yes" | "no"\n').lark
    with pytest.raises(InvalidRequest, match="not a GBNF grammar"):
        compiler.gbnf("root ::= (unclosed\n")
    with pytest.raises(InvalidRequest, match=f"at most {MAX_GBNF_RULES:,}"):
        compiler.gbnf(gbnf_chain(MAX_GBNF_RULES + 1))


def test_a_grammar_slower_to_compile_than_the_bound_is_refused_in_that_time() -> None:
    slow = Compiler(locate(SMOLLM2), timeout_s=0.2)
    slow.start()
    try:
        began = time.monotonic()
        with pytest.raises(InvalidRequest, match=r"did not compile within 0\.2 s"):
            slow.gbnf(gbnf_chain(MAX_GBNF_RULES - 10))  # converting a long chain takes about a second
        assert time.monotonic() - began < 5
        assert slow.gbnf('root ::= "ok"\n').lark  # a new process answers the next one
    finally:
        slow.close()
