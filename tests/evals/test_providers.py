"""--provider NAME=URL[,model=M][,key_env=VAR]: read exactly, a name that could leave the results folder refused,
an unknown option named, and a server asked which model it serves when none is given."""

from __future__ import annotations

import pytest

from evals.providers import ProviderSpecError, parse_provider
from tests.conftest import AppServer


def test_a_provider_with_its_model_and_key_variable() -> None:
    provider = parse_provider("big=http://127.0.0.1:9/v1,model=qwen,key_env=MY_KEY")
    assert (provider.name, provider.base_url, provider.model, provider.key_env) == (
        "big",
        "http://127.0.0.1:9/v1",
        "qwen",
        "MY_KEY",
    )


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("http://127.0.0.1:9/v1", "expects NAME=URL"),
        ("..=http://127.0.0.1:9/v1,model=m", "not . or .."),
        ("a/b=http://127.0.0.1:9/v1,model=m", "a name is letters"),
        ("a=http://127.0.0.1:9/v1,model=m,temperature=0", "unknown option temperature"),
        ("a=http://127.0.0.1:9/v1", "cannot ask http://127.0.0.1:9/v1 which model it serves"),
    ],
)
def test_a_provider_that_cannot_be_used_is_refused_saying_why(spec: str, said: str) -> None:
    with pytest.raises(ProviderSpecError, match=said):
        parse_provider(spec)


def test_without_a_model_the_server_is_asked_which_it_serves(scripted: AppServer) -> None:
    provider = parse_provider(f"s={scripted.base_url}")
    assert provider.model and provider.base_url == scripted.base_url
