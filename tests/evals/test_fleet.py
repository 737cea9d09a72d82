"""The docs' fleet recipe, as written: LiteLLM's proxy in front of two scripted servers, with its master key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from evals.__main__ import main
from evals.servers import free_port
from serve.scripted.app import create_app
from tests.conftest import ROOT, AppServer

FLEET = """model_list:
  - model_name: solve
    litellm_params: {{model: openai/solve, api_base: "{a}", api_key: none}}
  - model_name: solve
    litellm_params: {{model: openai/solve, api_base: "{b}", api_key: none}}
router_settings: {{routing_strategy: simple-shuffle}}
general_settings: {{master_key: os.environ/LITELLM_MASTER_KEY}}
"""


@pytest.mark.slow
def test_the_eval_through_a_router_reaches_both_servers_and_scores_6_of_6(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = AppServer(create_app()), AppServer(create_app())
    (tmp_path / "fleet.yaml").write_text(FLEET.format(a=first.base_url, b=second.base_url))
    port = free_port()
    proxy = subprocess.Popen(
        [str(shutil.which("litellm", path=os.path.dirname(os.sys.executable))), "--config", "fleet.yaml",
         "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path, env={**os.environ, "LITELLM_MASTER_KEY": "sk-fleet", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        key = {"Authorization": "Bearer sk-fleet"}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", headers=key, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        monkeypatch.setenv("LITELLM_MASTER_KEY", "sk-fleet")
        provider = f"fleet=http://127.0.0.1:{port}/v1,model=solve,key_env=LITELLM_MASTER_KEY"
        assert main(["run", "--provider", provider, "--concurrency", "4", "--out", str(tmp_path / "out")]) == 0
        served = [httpx.get(f"{s.url}/metrics").text for s in (first, second)]
        assert all('requests_total{path="/v1/chat/completions",status="200"}' in m for m in served)
        summary = (tmp_path / "out" / "report.md").read_text()
        assert "6/6 right" in summary
        wrong_key = f"fleet=http://127.0.0.1:{port}/v1,model=solve,key_env=NO_SUCH_KEY_VARIABLE"
        one_task = json.loads((ROOT / "evals" / "suites" / "default.json").read_text())
        (tmp_path / "one.json").write_text(json.dumps({**one_task, "tasks": one_task["tasks"][:1]}))
        main(["run", "--provider", wrong_key, "--suite", str(tmp_path / "one.json"), "--out", str(tmp_path / "out2")])
        assert "eval: fleet failed: provider answered" in capsys.readouterr().err
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)
        first.stop()
        second.stop()
