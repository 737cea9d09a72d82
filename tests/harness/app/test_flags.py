"""The --controls flag that `harness run` and `python -m evals` share."""

from __future__ import annotations

import argparse

import pytest

from harness.app.flags import add_controls, profile_from
from harness.controls import PROFILES
from harness.core.config import AUTO


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(exit_on_error=False)
    add_controls(made)
    return made


def test_auto_is_the_default_and_every_profile_can_be_named() -> None:
    assert profile_from(parser().parse_args([])) is AUTO
    for name in ("tiny", "small", "none"):
        profile = profile_from(parser().parse_args(["--controls", name]))
        assert profile is PROFILES[name] and profile.name == name and profile.why == "asked for"
    assert [c.name for c in profile_from(parser().parse_args(["--controls", "none"])).controls] == []


def test_an_unknown_profile_is_refused_by_the_parser() -> None:
    with pytest.raises(argparse.ArgumentError, match="invalid choice: 'large'"):
        parser().parse_args(["--controls", "large"])
