"""presets: the commands an operator names, from the command line or a TOML file, checked by type."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.app.presets import deepest, load_presets, parse_preset
from harness.errors import ConfigError


def test_presets_from_the_command_line_and_a_file(tmp_path: Path) -> None:
    preset = parse_preset("test=python -m pytest -q 'a b'")
    assert preset.argv == ("python", "-m", "pytest", "-q", "a b") and preset.needs_approval
    config = tmp_path / "commands.toml"
    config.write_text('[commands.lint]\nargv = ["ruff", "check", "."]\ntimeout_s = 30\nneeds_approval = false\n')
    (lint,) = load_presets(config)
    assert (lint.name, lint.argv, lint.timeout_s, lint.needs_approval) == ("lint", ("ruff", "check", "."), 30, False)
    for bad in ("noequals", "x=", "bad name=ls"):
        with pytest.raises(ConfigError):
            parse_preset(bad)
    config.write_text("[commands.x]\ncwd = 'a'\n")
    with pytest.raises(ConfigError, match=r"commands\.x"):
        load_presets(config)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[commands.x]\nargv = "ruff check"\n', "commands.x.argv"),  # a string is not a list of arguments
        ('[commands.x]\nargv = ["ls"]\nneeds_approval = 0\n', "needs_approval"),  # 0 is not a bool
        ('[commands.x]\nargv = ["ls"]\ntimeout_s = 0\n', "timeout_s"),
        ('[commands.x]\nargv = ["ls"]\nshell = true\n', "shell"),  # an unknown key is refused, not ignored
        ("[commands.x\n", "not valid TOML"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ],
)
def test_a_bad_commands_file_is_refused_saying_where(tmp_path: Path, text: str, says: str) -> None:
    config = tmp_path / "commands.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=r"commands\.toml: .*" + says.replace(".", r"\.")):
        load_presets(config)


def test_a_missing_commands_file_and_an_unsplittable_preset_say_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such commands file"):
        load_presets(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="cannot split it into words"):
        parse_preset("x=echo 'unclosed")


def test_brackets_in_strings_and_comments_are_not_nesting(tmp_path: Path) -> None:
    config = tmp_path / "commands.toml"
    brackets = "[" * 100
    config.write_text(
        f'[commands.x]\nargv = ["echo", "{brackets}", \'{brackets}\', """\n{brackets}\n"""]  # {brackets}\n'
        f'description = "a \\" {brackets}"\n'
    )
    [preset] = load_presets(config)
    assert preset.argv == ("echo", brackets, brackets, brackets + "\n")
    assert deepest("a = " + "[" * 65 + "]" * 65) == 65 and deepest("a = [[1], {b = [2]}]") == 3
