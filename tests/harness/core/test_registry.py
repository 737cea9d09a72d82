"""The tool registry refuses bad names and schemas, and describes tools in the OpenAI shape."""

from __future__ import annotations

import pytest

from harness.core.registry import Invalid, Registry
from harness.errors import RegistryError
from tests.harness.helpers import Recorder


@pytest.mark.parametrize("name", ["", "has space", "semi;colon", "dot.ted", "x" * 65, "ünïcode", "a/b"])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(RegistryError, match="invalid tool name"):
        Registry([Recorder(name=name)])


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(RegistryError, match="duplicate tool name 'probe'"):
        Registry([Recorder(), Recorder()])


def test_an_invalid_schema_is_refused_at_registration() -> None:
    with pytest.raises(RegistryError, match="invalid parameters schema"):
        Registry([Recorder(parameters={"type": "object", "properties": {"x": {"type": "integr"}}})])


def test_definitions_and_argument_validation() -> None:
    registry = Registry([Recorder(name="good_name-1")])
    (definition,) = registry.definitions()
    function = {"name": "good_name-1", "description": "a probe", "parameters": dict(Recorder().parameters)}
    assert definition == {"type": "function", "function": function}
    tool = registry.get("good_name-1")
    assert tool is not None and registry.arguments(tool, '{"x": 3}') == {"x": 3} and registry.arguments(tool, "") == {}
    assert isinstance(registry.arguments(tool, "[1]"), Invalid)
