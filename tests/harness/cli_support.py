"""Running the harness CLI as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.conftest import ROOT


def harness(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def last_json(out: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result
