"""python -m serve.llama's command line: options out of range and models that cannot be had are refused before
anything loads, a GGUF given by path is served under its own name, and the resident conversations are as many
as the cache holds and never fewer than run in parallel."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.registry import SMOLLM2
from models.weights import locate
from serve.llama.__main__ import choose, main, parser, sequences


@pytest.mark.parametrize(
    ("argv", "said"),
    [(["--chunk", "0"], "--chunk must be 1 to"), (["--draft", "-1"], "--draft must be 0 to")],
)
def test_options_out_of_range_are_refused_before_anything_loads(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and said in capsys.readouterr().err


def test_a_model_that_cannot_be_had_exits_2_saying_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--model", "gpt-5"]) == 2
    assert "unknown model 'gpt-5'; known models:" in capsys.readouterr().err
    assert main(["--gguf", str(tmp_path / "missing.gguf")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_gguf_by_path_is_served_under_its_name_or_the_label_given() -> None:
    assert choose(parser().parse_args(["--gguf", "/m/tiny-coder.gguf"])) == ("tiny-coder", None)
    assert choose(parser().parse_args(["--gguf", "/m/x.gguf", "--model", "mine"])) == ("mine", None)
    assert choose(parser().parse_args(["--model", SMOLLM2.name])) == (SMOLLM2.name, SMOLLM2)


def test_resident_conversations_fill_the_cache_and_are_never_fewer_than_the_parallel_ones() -> None:
    gguf = locate(SMOLLM2)
    roomy = sequences(gguf, parser().parse_args(["--ctx", "1024", "--cache-mb", "512", "--parallel", "2"]))
    tight = sequences(gguf, parser().parse_args(["--ctx", "8192", "--cache-mb", "1", "--parallel", "3"]))
    assert roomy > 2 and tight == 3
