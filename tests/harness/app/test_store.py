"""Saving and loading runs: atomic, with clear errors naming the file, and one process per run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.app.store import FileStore
from harness.core.config import RunConfig
from harness.core.state import new_run
from harness.errors import RunInUse, RunNotFound, StateError, StateFileError
from tests.conftest import ROOT


def test_save_then_load_is_exact(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    state = new_run("hello", system="s", model="plan")
    state.usage.prompt_tokens = 7
    store.save(state)
    assert store.load(state.run_id) == state
    assert not list(tmp_path.glob("*.tmp"))  # no temp file left behind


def test_corrupt_file_names_the_file(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    (tmp_path / "run-bad.json").write_text('{"run_id": "run-bad", "messa')
    with pytest.raises(StateFileError) as caught:
        store.load("run-bad")
    assert str(tmp_path / "run-bad.json") in str(caught.value) and "corrupt" in str(caught.value)


def test_unknown_version_names_the_file_and_the_version(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    state = new_run("x")
    store.save(state)
    raw = json.loads((tmp_path / f"{state.run_id}.json").read_text())
    raw["format_version"] = 99
    (tmp_path / f"{state.run_id}.json").write_text(json.dumps(raw))
    with pytest.raises(StateFileError, match=r"run-.*\.json: unknown state format version 99"):
        store.load(state.run_id)


def test_a_state_with_missing_fields_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "r1.json").write_text(json.dumps({"format_version": 2, "run_id": "r1"}))
    with pytest.raises(StateFileError, match=r"r1\.json: field messages: Field required"):
        FileStore(tmp_path).load("r1")


def test_missing_run_and_hostile_ids(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    with pytest.raises(RunNotFound):
        store.load("nope")
    for bad in ("../x", "/etc/passwd", "", "a/b"):
        with pytest.raises(StateError, match="invalid run id"):
            store.load(bad)


HOLD = """
import sys, time
from harness.app.store import FileStore
with FileStore(sys.argv[1]).lock("r1"):
    print("held", flush=True)
    time.sleep(30)
"""


def test_a_second_process_gets_run_in_use_until_the_first_dies(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunInUse, match="in use by another process"), FileStore(tmp_path).lock("r1"):
            pass
    finally:
        holder.kill()
        holder.wait()
    with FileStore(tmp_path).lock("r1"):  # the kernel released it with the process
        pass


def test_a_format_2_state_keeps_its_counters_as_the_controls_memory(tmp_path: Path) -> None:
    """Format 2 kept the small-model counters on the state and the controls as one flat record."""
    state = new_run("q", config=RunConfig("http://127.0.0.1:1/v1", "m", str(tmp_path)))
    raw = json.loads(state.to_json())
    raw.pop("controls")
    raw["config"]["controls"] = {"look_turns": 3, "repeat_guard": True, "answer_mode": "digest"}
    raw |= {"format_version": 2, "seen_calls": {"read_file:x": "c1"}, "repeats": 1, "empty_replies": 2}
    (tmp_path / f"{state.run_id}.json").write_text(json.dumps(raw))
    loaded = FileStore(tmp_path).load(state.run_id)
    assert loaded.controls["repeat_guard"] == {"seen": {"read_file:x": "c1"}, "repeats": 1}
    assert loaded.controls["empty_reply"] == {"retries": 2}
    assert loaded.config is not None and loaded.config.controls.name == "small"
    names = [spec.name for spec in loaded.config.controls.controls]  # what format 2 meant, whatever `small` holds now
    assert names == ["repeat_guard", "empty_reply", "look_first", "parallel_calls", "digest_answers"]


def test_what_a_kill_left_mid_save_is_removed_when_the_run_is_next_held(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    state, other = new_run("hello", model="plan"), new_run("other", model="plan")
    store.save(state)
    left = [tmp_path / f".{state.run_id}.k2j4x9.tmp", tmp_path / f".{other.run_id}.a8b7c6.tmp"]
    for path in left:
        path.write_text('{"run_id": "half')  # a save cut between writing its temp file and renaming it
    with store.lock(state.run_id):
        assert not left[0].exists() and left[1].exists()  # another run's file waits for that run's holder
        assert store.load(state.run_id) == state
