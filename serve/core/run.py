"""Serving an app with uvicorn on loopback, with the access log on stderr."""

from __future__ import annotations

import logging
import sys

import uvicorn
from fastapi import FastAPI

GRACEFUL_SHUTDOWN_S = 5


def access_log_to_stderr() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    logger = logging.getLogger("serve.access")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def run_server(app: FastAPI, host: str, port: int, quiet: bool = False) -> None:
    """Serve until interrupted; loopback unless the operator asks otherwise. Requests still running at shutdown
    get a few seconds, then are cut, so a client that waits forever cannot hold the server up."""
    if not quiet:
        access_log_to_stderr()
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
