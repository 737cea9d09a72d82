"""Which real model the main job uses when nobody names one, and why."""

from __future__ import annotations

from dataclasses import dataclass

from models.registry import DEFAULT_PREFERENCE, ModelSpec
from models.weights import hub_reachable, obtainable, offline, on_disk


@dataclass(frozen=True)
class Choice:
    spec: ModelSpec
    why: str


def default_model() -> Choice:
    """The first of DEFAULT_PREFERENCE that is on disk or can be fetched now, with the reason in words."""
    passed: list[str] = []
    for spec in DEFAULT_PREFERENCE:
        if on_disk(spec) is not None:
            return Choice(spec, f"{spec.name} is in the local cache" + explain(passed))
        if obtainable(spec):
            return Choice(spec, f"{spec.name} can be fetched ({spec.file.size / 1e9:.2f} GB)" + explain(passed))
        passed.append(f"{spec.name} is not cached and {why_not(spec)}")
    last = DEFAULT_PREFERENCE[-1]
    return Choice(last, f"nothing is cached or fetchable; trying {last.name} anyway" + explain(passed))


def why_not(spec: ModelSpec) -> str:
    if offline():
        return "HF_HUB_OFFLINE is set"
    return "the Hugging Face hub is unreachable" if not hub_reachable() else "cannot be fetched"


def explain(passed: list[str]) -> str:
    return f" ({'; '.join(passed)})" if passed else ""
