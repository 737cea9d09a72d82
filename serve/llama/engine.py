"""The engine: the one place that touches llama-cpp-python. Its errors are translated here into EngineError.

One llama.cpp context holds several conversations as KV sequences, each in its own stream (llama.cpp's
non-unified KV cache, as llama-server's slots), so a conversation's cells sit at their own positions
whatever the others do. Flash attention is off: with it on, a row's numbers depend on how many rows share
its batch; with it off, a decode step gives the same logits for a sequence alone or beside others.

llama.cpp aborts the process on a failed assertion, so every call here is checked before it is made
(positions, sequence ids, token ids, whole-stream copies only).
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt

from serve.errors import EngineError
from serve.llama.modes import BatchInvariant, Mode

DEFAULT_MODE = BatchInvariant()  # its granularity and decode rows are measured once loaded (probe.py)

# llama.h's llama_ftype, for the quantisation a GGUF says it has
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
    19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
    26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
    36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}  # fmt: skip
LOG_CALLBACK = llama_cpp.llama_log_callback(lambda level, text, data: None)  # kept alive for the process


def quiet_logs() -> None:
    """llama.cpp writes pages of loading chatter to stderr; the server prints what matters itself."""
    llama_cpp.llama_log_set(LOG_CALLBACK, None)


def meta_of(model: Any, key: str) -> str | None:
    buffer = ctypes.create_string_buffer(1 << 16)
    size = llama_cpp.llama_model_meta_val_str(model, key.encode(), buffer, len(buffer))
    return buffer.value.decode("utf-8", errors="replace") if size >= 0 else None


def vocabulary_tokenizer(gguf: Path) -> Any:
    """llguidance's view of a GGUF's vocabulary, loading the vocabulary only (no weights); kept for the process."""
    from llguidance.llamacpp import lltokenizer_from_vocab

    quiet_logs()
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(gguf).encode(), params)
    if not model:
        raise EngineError(f"llama.cpp could not read {gguf}")
    return lltokenizer_from_vocab(llama_cpp.llama_model_get_vocab(model))


@dataclass(frozen=True)
class Row:
    """One token to evaluate: which token, at which position of which sequence, and whether its logits are wanted."""

    token: int
    position: int
    sequence: int
    logits: bool = False


class Engine:
    """A GGUF loaded once, with `sequences` KV streams of `context` cells each."""

    def __init__(
        self,
        gguf: Path,
        context: int = 4096,
        threads: int = 2,
        sequences: int = 4,
        batch: int = 512,
        mode: Mode = DEFAULT_MODE,
    ) -> None:
        quiet_logs()
        llama_cpp.llama_backend_init()
        model_params = llama_cpp.llama_model_default_params()
        # The mode decides the kernels (see modes.py): plain weights and no flash attention keep a request's
        # logits the same beside others; the throughput mode takes llama-server's setup.
        model_params.use_extra_bufts = mode.repacked
        self.model = llama_cpp.llama_model_load_from_file(str(gguf).encode(), model_params)
        if not self.model:
            raise EngineError(f"llama.cpp could not load {gguf} (not a GGUF, or a model this llama.cpp cannot run)")
        params = llama_cpp.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = context * sequences, batch, batch
        params.n_seq_max, params.kv_unified = sequences, False
        auto, off = llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO, llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.flash_attn_type = auto if mode.fast_kernels else off
        params.n_threads = params.n_threads_batch = threads
        self.ctx = llama_cpp.llama_init_from_model(self.model, params)
        if not self.ctx:
            llama_cpp.llama_model_free(self.model)
            raise EngineError(f"llama.cpp could not make a context of {sequences} x {context} tokens for {gguf}")
        self.gguf, self.threads, self.batch_size, self.sequences = gguf, threads, batch, sequences
        self.mode: Mode = mode
        self.context = int(llama_cpp.llama_n_ctx_seq(self.ctx))
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(batch, 0, sequences)
        self.pieces: dict[int, bytes] = {}
        self.lock = threading.Lock()  # tokenizing may happen on other threads than decoding

    @staticmethod
    def kv_bytes_per_token(gguf: Path) -> int:
        """What one token of context costs in the f16 KV cache, read from the GGUF's metadata (no weights)."""
        quiet_logs()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        model = llama_cpp.llama_model_load_from_file(str(gguf).encode(), params)
        if not model:
            raise EngineError(f"llama.cpp could not read {gguf}")
        try:

            def number(key: str, default: int = 0) -> int:
                value = meta_of(model, key)
                return int(value) if value is not None and value.isdigit() else default

            arch = meta_of(model, "general.architecture") or ""
            layers, width = number(f"{arch}.block_count"), number(f"{arch}.embedding_length")
            heads = number(f"{arch}.attention.head_count", 1)
            kv_heads = number(f"{arch}.attention.head_count_kv", heads)
            key_length = number(f"{arch}.attention.key_length", width // max(1, heads))
            value_length = number(f"{arch}.attention.value_length", key_length)
            return 2 * layers * kv_heads * (key_length + value_length)
        finally:
            llama_cpp.llama_model_free(model)

    # --- facts about the model --------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        return meta_of(self.model, key)

    @property
    def quantisation(self) -> str:
        raw = self.meta("general.file_type")
        return FILE_TYPES.get(int(raw), f"type {raw}") if raw and raw.isdigit() else "unknown"

    @property
    def build(self) -> str:
        """The llama.cpp build and the CPU features it uses: what decides which kernels a call gets."""
        return f"llama-cpp-python {llama_cpp.__version__}: {llama_cpp.llama_print_system_info().decode().strip()}"

    @property
    def parameters(self) -> int:
        return int(llama_cpp.llama_model_n_params(self.model))

    @property
    def chat_template(self) -> str:
        return self.meta("tokenizer.chat_template") or ""

    def token_text(self, token: int) -> str:
        return self.piece(token).decode("utf-8", errors="replace") if token >= 0 else ""

    @property
    def bos_text(self) -> str:
        return self.token_text(int(llama_cpp.llama_vocab_bos(self.vocab)))

    @property
    def eos_text(self) -> str:
        return self.token_text(int(llama_cpp.llama_vocab_eos(self.vocab)))

    def is_end(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))

    def end_tokens(self) -> tuple[int, ...]:
        return tuple(t for t in range(self.n_vocab) if self.is_end(t))

    def control_tokens(self) -> frozenset[int]:
        """The control tokens that do not end a reply (`<|im_start|>`, `<|fim_prefix|>`...): a reply's text leaves
        them out, as llama-server and `skip_special_tokens` do. User-defined ones (Qwen's `<tool_call>`) stay."""
        control = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
        return frozenset(
            t
            for t in range(self.n_vocab)
            if int(llama_cpp.llama_vocab_get_attr(self.vocab, t)) & control and not self.is_end(t)
        )

    def special_texts(self) -> tuple[str, ...]:
        """The text of every control or user-defined token (`<|im_end|>`, `<tool_call>`...), longest first."""
        marked = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
        texts = {
            self.token_text(t)
            for t in range(self.n_vocab)
            if int(llama_cpp.llama_vocab_get_attr(self.vocab, t)) & marked
        }
        return tuple(sorted((t for t in texts if len(t) > 1), key=lambda t: (-len(t), t)))

    def tokens_made_of(self, characters: bytes) -> tuple[int, ...]:
        """The tokens whose text holds only these bytes (and at least one)."""
        allowed = set(characters)
        return tuple(t for t in range(self.n_vocab) if (piece := self.piece(t)) and set(piece) <= allowed)

    def is_special(self, text: str) -> bool:
        """Whether `text` is one control or user-defined token (Qwen's <tool_call> is; SmolLM2's is plain text)."""
        tokens = self.tokenize(text)
        if len(tokens) != 1:
            return False
        attributes = int(llama_cpp.llama_vocab_get_attr(self.vocab, tokens[0]))
        return bool(attributes & (llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED))

    # --- text <-> tokens --------------------------------------------------------------------------------
    def tokenize(self, text: str, special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        room = len(data) + 16
        with self.lock:
            buffer = (llama_cpp.llama_token * room)()
            count = llama_cpp.llama_tokenize(self.vocab, data, len(data), buffer, room, False, special)
            if count < 0:
                raise EngineError(f"tokenizing needed {-count} slots, more than the {room} given")
            return list(buffer[:count])

    def tokenize_parts(self, parts: Sequence[tuple[str, bool]], limit: int | None = None) -> list[int]:
        """Tokens of text given in parts, each with whether special-token text in it may become a special token.
        With `limit`, it stops once the tokens pass it (the caller refuses such a prompt; what it reads need not
        be read whole): before a part whose bytes alone are more than `limit` tokens could hold, and after the
        part that passes it."""
        tokens: list[int] = []
        for text, special in parts:
            if not text:
                continue
            if limit is not None and len(text.encode("utf-8")) > (limit - len(tokens)) * self.longest_piece:
                return tokens + [0] * (limit + 1 - len(tokens))  # more than `limit`, known without tokenizing
            tokens += self.tokenize(text, special)
            if limit is not None and len(tokens) > limit:
                return tokens
        return tokens

    @functools.cached_property
    def longest_piece(self) -> int:
        """The most bytes one token of the vocabulary stands for: a text of N bytes is at least N / this tokens."""
        return max(1, max(len(self.piece(token)) for token in range(self.n_vocab)))

    def piece(self, token: int) -> bytes:
        """The bytes one token stands for (special tokens as their text)."""
        known = self.pieces.get(token)
        if known is not None:
            return known
        if not 0 <= token < self.n_vocab:
            raise EngineError(f"token {token} is outside the vocabulary of {self.n_vocab}")
        buffer = ctypes.create_string_buffer(256)
        size = llama_cpp.llama_token_to_piece(self.vocab, token, buffer, len(buffer), 0, True)
        if size < 0:  # a longer piece: llama.cpp says how much room it needs
            buffer = ctypes.create_string_buffer(-size)
            size = llama_cpp.llama_token_to_piece(self.vocab, token, buffer, len(buffer), 0, True)
        data = buffer.raw[: max(size, 0)]
        self.pieces[token] = data
        return data

    def detokenize(self, tokens: Sequence[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", errors="replace")

    def guidance_tokenizer(self) -> Any:
        """llguidance's view of this vocabulary (about a second to build; the caller keeps it)."""
        from llguidance.llamacpp import lltokenizer_from_vocab

        return lltokenizer_from_vocab(self.vocab)

    # --- evaluation ------------------------------------------------------------------------------------
    def decode(self, rows: Sequence[Row]) -> None:
        """Evaluate rows in one llama_decode call; their logits (where asked) are read with `logits(i)`."""
        if not 0 < len(rows) <= self.batch_size:
            raise EngineError(f"a decode call takes 1 to {self.batch_size} rows, not {len(rows)}")
        batch = self.batch
        for index, row in enumerate(rows):
            if not (0 <= row.token < self.n_vocab and 0 <= row.sequence < self.sequences):
                raise EngineError(f"row {row} names a token or sequence that does not exist")
            if not 0 <= row.position < self.context:
                raise EngineError(f"position {row.position} is outside the context of {self.context}")
            batch.token[index], batch.pos[index] = row.token, row.position
            batch.n_seq_id[index], batch.seq_id[index][0], batch.logits[index] = 1, row.sequence, row.logits
        batch.n_tokens = len(rows)
        status = llama_cpp.llama_decode(self.ctx, batch)
        if status != 0:
            raise EngineError(f"llama_decode failed with status {status}")

    def logits(self, index: int) -> npt.NDArray[np.float32]:
        """The logits of row `index` of the last decode call, as a view valid until the next call."""
        pointer = llama_cpp.llama_get_logits_ith(self.ctx, index)
        if not pointer:
            raise EngineError(f"row {index} of the last decode call has no logits (it did not ask for them)")
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    # --- KV sequences ----------------------------------------------------------------------------------
    def keep(self, sequence: int, length: int) -> None:
        """Keep the first `length` cells of a sequence, drop the rest."""
        llama_cpp.llama_memory_seq_rm(self.memory, sequence, length, -1)

    def copy(self, source: int, target: int) -> None:
        """Make `target` hold exactly what `source` holds (whole streams only: llama.cpp aborts on partial copies)."""
        if source == target:
            return
        llama_cpp.llama_memory_seq_rm(self.memory, target, -1, -1)
        llama_cpp.llama_memory_seq_cp(self.memory, source, target, -1, -1)

    def close(self) -> None:
        if self.ctx:
            llama_cpp.llama_batch_free(self.batch)
            llama_cpp.llama_free(self.ctx)
            llama_cpp.llama_model_free(self.model)
            self.ctx = self.model = None
