"""Where weights come from: the packaged SmolLM2, a local path, and clear errors when a model cannot be had."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.errors import ModelUnavailable, UnknownModelName
from models.registry import MODELS, QWEN, SMOLLM2, model_spec
from models.weights import available, locate


def test_the_registry() -> None:
    assert set(MODELS) == {"qwen2.5-0.5b-instruct", "smollm2-135m-instruct"}
    assert QWEN.source.repo_id == "Qwen/Qwen2.5-0.5B-Instruct-GGUF" and QWEN.quantisation == "Q8_0"  # type: ignore[union-attr]
    with pytest.raises(UnknownModelName, match=r"known models: qwen2\.5-0\.5b-instruct, smollm2-135m-instruct"):
        model_spec("gpt-5")


def test_smollm2_is_found_inside_its_package() -> None:
    path = locate(SMOLLM2)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    with path.open("rb") as handle:
        assert handle.read(4) == b"GGUF"
    assert available(SMOLLM2)


def test_an_explicit_path_wins_and_a_missing_one_is_explained(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert locate(QWEN, gguf) == gguf
    with pytest.raises(ModelUnavailable, match="does not exist"):
        locate(QWEN, tmp_path / "nope.gguf")


def test_qwen_offline_and_not_cached_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable) as caught:
        locate(QWEN)
    message = str(caught.value)
    assert "not in the Hugging Face cache and HF_HUB_OFFLINE is set" in message
    assert "--gguf PATH" in message and "smollm2-135m-instruct" in message
    assert not available(QWEN)
