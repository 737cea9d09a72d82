"""The harness's exceptions are the tree its module documents: every class drawn there exists with the parent
drawn, and every class the module defines is drawn."""

from __future__ import annotations

import inspect
import re

import harness.errors as errors


def drawn() -> dict[str, str]:
    """Each class in the module docstring's tree, with the class it hangs from."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        found = re.match(r"^([│ ]*)(?:[├└]── )?([A-Z]\w+)\b", line)
        if not found or not (found.group(1) or line.startswith(("├", "└", "HarnessError"))):
            continue
        depth = len(found.group(1)) // 4 + (0 if found.group(2) == "HarnessError" else 1)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[found.group(2)] = stack[-1][1]
        stack.append((depth, found.group(2)))
    return parents


def test_the_documented_tree_is_the_class_tree() -> None:
    tree = drawn()
    defined = {
        name for name, value in vars(errors).items() if inspect.isclass(value) and value.__module__ == errors.__name__
    }
    assert set(tree) | {"HarnessError"} == defined
    for name, parent in tree.items():
        assert getattr(errors, parent) in getattr(errors, name).__bases__, f"{name} should derive from {parent}"


def test_settings_and_states_that_do_not_fit_are_value_errors_naming_where() -> None:
    assert issubclass(errors.ConfigError, ValueError) and issubclass(errors.InvalidState, ValueError)
    invalid = errors.InvalidState("limits.max_turns", "must be at least 1")
    assert str(invalid) == "limits.max_turns: must be at least 1" and invalid.where == "limits.max_turns"
