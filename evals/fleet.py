"""A provider over several model servers: the eval starts LiteLLM's proxy (its router) in front of them, on
loopback, and runs the suite through it, so a test split of hundreds of tasks spreads over servers on
several machines (`--provider fleet=http://a:8000/v1+http://b:8000/v1 --concurrency 8`).

The router passes the request's extension fields through (tool_parameters, grammar) but not the model's
card (`meta`: its size, window and extensions), which the harness reads to choose its controls; so the
card is read from the first server, and the run is told the profile and window it gives, as a run against
that one server would choose them. With the same greedy servers behind it, a suite gets the same answers
over the fleet as over one.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

from evals.servers import ServerFailed, free_port
from harness.app.client import OpenAIClient
from harness.controls.profiles import card_for, choose, context_of, fitted_profile
from harness.core.config import AUTO, Profile

KEY_ENV = "EVAL_FLEET_KEY"  # where the eval keeps the proxy's key for its own runs (never on a command line)
START_S = 120.0


@dataclass(frozen=True)
class Chosen:
    """What a run against the fleet is told, as the first server's card gives it."""

    profile: Profile
    window: int | None


class Fleet:
    """LiteLLM's proxy over `urls` (each an OpenAI-compatible base URL serving `model`), least busy first."""

    def __init__(self, urls: list[str], model: str, key_env: str = "LLM_API_KEY") -> None:
        self.urls, self.model, self.key_env = urls, model, key_env
        self.port = free_port()
        self.key = f"sk-{secrets.token_hex(16)}"
        self.folder = Path(tempfile.mkdtemp(prefix="fleet-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def config(self) -> str:
        key = "os.environ/" + self.key_env if os.environ.get(self.key_env) else "none"
        servers = "".join(
            f'  - model_name: {self.model}\n    litellm_params: {{model: openai/{self.model}, api_base: "{url}", '
            f"api_key: {key}}}\n"
            for url in self.urls
        )
        return (
            f"model_list:\n{servers}router_settings: {{routing_strategy: least-busy}}\n"
            "general_settings: {master_key: os.environ/LITELLM_MASTER_KEY}\n"
        )

    def start(self) -> Fleet:
        proxy = shutil.which("litellm", path=os.path.dirname(sys.executable)) or shutil.which("litellm")
        if proxy is None:
            raise ServerFailed("a fleet needs LiteLLM's proxy: pip install 'litellm[proxy]'")
        (self.folder / "fleet.yaml").write_text(self.config(), encoding="utf-8")
        environment = {**os.environ, "LITELLM_MASTER_KEY": self.key, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        self.process = subprocess.Popen(
            [proxy, "--config", "fleet.yaml", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=self.folder, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.environ[KEY_ENV] = self.key
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerFailed(f"LiteLLM's proxy exited with code {self.process.returncode}")
            try:
                answer = httpx.get(
                    f"{self.base_url}/models", headers={"Authorization": f"Bearer {self.key}"}, timeout=2
                )
                if answer.status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise ServerFailed(f"LiteLLM's proxy on port {self.port} did not answer in {START_S:.0f}s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Fleet:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def chosen_for(url: str, model: str, profile: Profile = AUTO, key_env: str = "LLM_API_KEY") -> Chosen:
    """The profile and window a run against the server at `url` would choose from its card."""

    async def ask() -> Chosen:
        async with OpenAIClient(url, model, api_key=os.environ.get(key_env)) as client:
            cards = await client.models()
        card = card_for(model, cards) if cards else None
        picked = choose(model, cards) if profile.name == "auto" else fitted_profile(profile, model, cards)
        return Chosen(picked, context_of(card))

    return asyncio.run(ask())
