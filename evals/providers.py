"""Which providers an eval runs against, and starting (then stopping) the default servers when they are down."""

from __future__ import annotations

import os
import re
import sys
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from evals.fleet import KEY_ENV, Fleet, chosen_for
from evals.runner import Provider
from evals.servers import ServerProcess, free_port, healthy, port_free
from harness.app.client import base_url_from_env, tls
from harness.core.config import AUTO, Profile
from models.choice import default_model

SCRIPTED_URL = "http://127.0.0.1:8001/v1"


class ProviderSpecError(ValueError):
    """A --provider value that cannot be used."""


def root_of(base_url: str) -> str:
    return base_url.rstrip("/").removesuffix("/v1")


def first_model(base_url: str, key_env: str = "LLM_API_KEY") -> str:
    key = os.environ.get(key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        listed = httpx.get(f"{base_url.rstrip('/')}/models", headers=headers, timeout=10, verify=tls(base_url))
        return str(listed.json()["data"][0]["id"])
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
        raise ProviderSpecError(
            f"cannot ask {base_url} which model it serves ({exc}); give one with model=NAME"
        ) from exc


def parse_provider(spec: str, stack: ExitStack | None = None, controls: Profile = AUTO) -> Provider:
    """NAME=URL[,model=M][,key_env=VAR]: the API key, if any, is read from VAR (default LLM_API_KEY). URL may
    be several joined by `+` (servers of the same model): the eval runs LiteLLM's proxy in front of them, for
    as long as `stack` lasts (see fleet.py)."""
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        raise ProviderSpecError(f"--provider expects NAME=URL[,model=M][,key_env=VAR], got {spec!r}")
    if not re.fullmatch(r"(?!\.{1,2}$)[A-Za-z0-9_.-]{1,64}", name):  # it names the provider's workspaces
        raise ProviderSpecError(f"--provider {name!r}: a name is letters, digits, '_', '-' and '.', not . or ..")
    url, *options = rest.split(",")
    settings = dict(option.partition("=")[::2] for option in options)
    unknown = set(settings) - {"model", "key_env"}
    if unknown:
        raise ProviderSpecError(f"--provider {spec!r}: unknown option {', '.join(sorted(unknown))} (model, key_env)")
    key_env = settings.get("key_env") or "LLM_API_KEY"
    urls = [base_url_from_env(part) for part in url.split("+")]
    model = settings.get("model") or first_model(urls[0], key_env)
    if len(urls) == 1:
        return Provider(name, urls[0], model, key_env)
    if stack is None:
        raise ProviderSpecError(
            f"--provider {spec!r}: several servers need a router, which this command does not start"
        )
    fleet = stack.enter_context(Fleet(urls, model, key_env))
    told = chosen_for(urls[0], model, controls, key_env)
    say(f"{name}: LiteLLM's proxy over {len(urls)} servers at {fleet.base_url}; controls {told.profile.name}")
    return Provider(name, fleet.base_url, model, KEY_ENV, told.profile, told.window)


def say(message: str) -> None:
    print(f"eval: {message}", file=sys.stderr, flush=True)


def scripted_provider(stack: ExitStack, logs: Path) -> Provider:
    if healthy(root_of(SCRIPTED_URL)):
        return Provider("scripted", SCRIPTED_URL, "solve")
    server = stack.enter_context(ServerProcess("serve.scripted", log=logs / "scripted.log"))
    say(f"started the scripted provider on {server.base_url}")
    return Provider("scripted", server.base_url, "solve")


def local_provider(stack: ExitStack, logs: Path) -> Provider:
    base_url = base_url_from_env(None)
    if healthy(root_of(base_url)):
        return Provider("local", base_url, first_model(base_url))
    choice = default_model()
    spec = choice.spec
    say(f"the local side runs {spec.name}: {choice.why}")
    wanted = urlsplit(base_url).port or 8000
    port = wanted if not healthy(f"http://127.0.0.1:{wanted}") and port_free(wanted) else free_port()
    say(f"starting the local model server ({spec.name}) on port {port}; the first start fetches and checks weights")
    server = stack.enter_context(ServerProcess("serve.llama", "--model", spec.name, port=port, log=logs / "llama.log"))
    return Provider("local", server.base_url, spec.name)


def resolve(specs: list[str], stack: ExitStack, logs: Path, controls: Profile = AUTO) -> list[Provider]:
    if specs:
        return [parse_provider(spec, stack, controls) for spec in specs]
    logs.mkdir(parents=True, exist_ok=True)
    return [scripted_provider(stack, logs), local_provider(stack, logs)]
