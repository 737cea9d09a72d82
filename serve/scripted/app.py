"""The scripted provider's app: the serving core over the scripted backend."""

from __future__ import annotations

from fastapi import FastAPI

from serve.core.app import BodyLimits
from serve.core.app import create_app as core_app
from serve.scripted.backend import ScriptedBackend
from wire.tokens import TokenCounter


def create_app(latency_ms: int = 0, counter: TokenCounter | None = None, limits: BodyLimits | None = None) -> FastAPI:
    return core_app(ScriptedBackend(latency_ms, counter), limits, title="scripted provider")
