"""The local model server's app: the serving core over the llama backend."""

from __future__ import annotations

from fastapi import FastAPI

from serve.core.app import BodyLimits
from serve.core.app import create_app as core_app
from serve.llama.backend import LlamaBackend


def create_app(backend: LlamaBackend, limits: BodyLimits | None = None) -> FastAPI:
    return core_app(backend, limits, title="local model server")
