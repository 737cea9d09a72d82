"""The o200k_base encoder works on a machine that has never been online."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load

from wire.tokens import O200K_SHA256, O200K_URL, TokenCounter, o200k, seed_tiktoken_cache


def no_network(*args: object, **kwargs: object) -> bytes:
    raise AssertionError("tiktoken tried the network")


def test_the_encoder_loads_from_an_empty_cache_without_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.load, "read_file", no_network)  # third-party I/O, not ours
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    encoding = o200k()
    assert encoding.encode("hello world") == [24912, 2375]
    cached = tmp_path / hashlib.sha1(O200K_URL.encode()).hexdigest()
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == O200K_SHA256


def test_a_corrupt_cache_entry_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    target = seed_tiktoken_cache()
    assert target is not None
    target.write_bytes(b"garbage")
    assert o200k().decode(o200k().encode("timeout")) == "timeout"


def test_completion_counts_content_and_tool_calls() -> None:
    counter = TokenCounter()
    call = {"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
    assert counter.completion({"role": "assistant", "content": None, "tool_calls": [call]}) == counter.json([call])
    assert counter.completion({"role": "assistant", "content": "hi"}) == counter.text('"hi"')
    assert counter.prompt([{"role": "user", "content": "x"}]) == counter.text('{"content":"x","role":"user"}')
