"""config: a run's configuration and command presets refuse what they cannot mean, by name, when built."""

from __future__ import annotations

import pytest

from harness.core.config import ALL_TOOLS, LOOKING_TOOLS, CommandPreset, RunConfig
from harness.errors import ConfigError


def config(**fields: object) -> RunConfig:
    return RunConfig("http://127.0.0.1:8000/v1", "m", ".", **fields)  # type: ignore[arg-type]


def test_a_run_gets_the_looking_tools_unless_it_names_others() -> None:
    assert config().tools == LOOKING_TOOLS and set(LOOKING_TOOLS) <= set(ALL_TOOLS)
    assert config(tools=("read_file", "delete_file")).tools == ("read_file", "delete_file")


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"tools": ("read_file", "rm_rf")}, "unknown tools \\['rm_rf'\\]"),
        ({"max_tokens": 0}, "max_tokens must be at least 1"),
        ({"request_timeout_s": 0.0}, "request timeout must be above 0"),
        ({"request_timeout_s": float("nan")}, "request timeout must be above 0"),
    ],
)
def test_a_config_that_cannot_run_is_refused_saying_what(fields: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        config(**fields)


@pytest.mark.parametrize(
    ("name", "argv", "timeout", "says"),
    [
        ("has space", ("ls",), 60.0, "invalid command name"),
        ("ls", (), 60.0, "needs an executable"),
        ("ls", ("ls", ""), 60.0, "no empty or NUL-bearing argument"),
        ("ls", ("ls", "a\x00b"), 60.0, "NUL-bearing"),
        ("ls", ("ls",), float("inf"), "must be positive"),
        ("ls", ("ls",), -1.0, "must be positive"),
    ],
)
def test_a_preset_that_cannot_run_is_refused(name: str, argv: tuple[str, ...], timeout: float, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        CommandPreset(name, argv, timeout_s=timeout)
    assert CommandPreset("check", ("make", "check")).needs_approval  # approval unless the operator says not
