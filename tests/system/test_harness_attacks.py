"""Each attack the hostile review found, replayed: none hangs, none prints a traceback, none leaves the workspace,
nothing is paid twice. (The generated attacks are in test_generated.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from harness.app.client import OpenAIClient, retry_after
from harness.app.store import FileStore
from harness.app.trace import JsonlTrace, read_trace
from harness.core.loop import run
from harness.core.options import RunOptions
from harness.core.policy import fingerprint
from harness.core.protocols import ModelRequest
from harness.core.registry import Registry
from harness.core.state import new_run, state_from
from harness.errors import PermanentToolError, ProviderUnavailable, ToolError
from harness.fs.workspace import TEMP_PREFIX, Workspace
from harness.tools.files import DeleteFile, ListFiles, ReadFile
from harness.tools.writes import WriteFile
from tests.conftest import AppServer, scripted_server
from tests.harness.cli_support import harness, harness_process, last_json, start
from tests.harness.helpers import PLAIN, Recorder, calls, script, tool_context, tool_messages


def no_traceback(done: Any) -> None:
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr


# --- hangs -----------------------------------------------------------------------------------------------------
async def test_write_file_on_a_fifo_is_refused_at_once(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    write = WriteFile(Workspace(workspace), needs_approval=False)
    with pytest.raises(PermanentToolError, match="not a regular file"):
        await asyncio.wait_for(write.run({"path": "pipe", "content": "x"}, tool_context()), 2)
    with pytest.raises(PermanentToolError, match="not a regular file"):
        await asyncio.wait_for(asyncio.to_thread(Workspace(workspace).read_bytes, "pipe", 10), 2)


def hanging_server() -> tuple[socket.socket, int]:
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []

    def hold() -> None:
        for _ in range(8):
            held.append(listener.accept()[0])

    threading.Thread(target=hold, daemon=True).start()
    return listener, listener.getsockname()[1]


async def test_a_server_that_never_answers_is_named_as_such_and_bounded() -> None:
    listener, port = hanging_server()
    try:
        async with OpenAIClient(f"http://127.0.0.1:{port}/v1", "m", timeout_s=0.5, backoff_s=0.01) as client:
            began = time.monotonic()
            with pytest.raises(ProviderUnavailable, match=r"accepted the request but sent no reply within 0\.5 s"):
                await client.complete(ModelRequest([{"role": "user", "content": "q"}], []))
            assert time.monotonic() - began < 3  # retried once, not for eight minutes
    finally:
        listener.close()


# --- a run that could never finish --------------------------------------------------------------------------------
async def test_a_lone_surrogate_from_the_model_is_saved_and_shown(tmp_path: Path) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        body = b'{"model":"m","choices":[{"message":{"role":"assistant","content":"bad \\ud800 text"}}]}'
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    store = FileStore(tmp_path)
    async with OpenAIClient("http://x/v1", "m", transport=httpx.MockTransport(reply)) as model:
        state = await run(new_run("q"), Registry(), RunOptions(model=model, store=store))
    assert state.status == "completed" and state.answer == "bad \ufffd text"
    assert store.load(state.run_id).answer == "bad \ufffd text"


async def test_a_lone_surrogate_in_tool_arguments_reaches_the_tool_scrubbed_and_the_state_saves(
    tmp_path: Path,
) -> None:
    probe = Recorder(parameters={"type": "object"})
    model = script(calls(("c1", "probe", {"x": "\ud800"})), "done")
    store = FileStore(tmp_path)
    state = await run(new_run("q"), Registry([probe]), RunOptions(model=model, store=store, controls=PLAIN))
    assert probe.runs == [{"x": "\ufffd"}] and state.status == "completed"
    assert state_from(json.loads(store.path(state.run_id).read_text())) == state  # ASCII JSON, lossless


# --- escapes ------------------------------------------------------------------------------------------------------
def test_a_hard_link_to_an_outside_file_is_neither_read_nor_listed(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET from outside")
    os.link(outside, workspace / "inside.txt")
    jail = Workspace(workspace)
    with pytest.raises(PermanentToolError, match="2 hard links"):
        jail.read_bytes("inside.txt", 100)
    entries, skipped = jail.entries()
    assert "inside.txt" not in {e.path for e in entries} and skipped == 1
    jail.write_atomic("inside.txt", b"new")  # a write replaces the name; the outside file is untouched
    assert outside.read_text() == "SECRET from outside"


def test_listing_never_follows_a_folder_swapped_for_a_link(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leaked-secret.txt").write_text("x")
    folder = workspace / "sub"
    folder.mkdir()
    (folder / "a.txt").write_text("a")
    jail, stop = Workspace(workspace), threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(folder, workspace / "sub.real")
            os.symlink(outside, folder)
            os.unlink(folder)
            os.rename(workspace / "sub.real", folder)

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        for _ in range(2000):
            entries, _ = jail.entries()
            assert not any("leaked" in e.path for e in entries)
    finally:
        stop.set()
        swapper.join()


# --- paid twice ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def slow_provider() -> Iterator[AppServer]:
    yield from scripted_server(latency_ms=250)


def common(provider: AppServer, workspace: Path, state_dir: Path, model: str, run_id: str) -> list[str]:
    return [
        *("--base-url", provider.base_url, "--model", model, "--workspace", str(workspace)),
        *("--state-dir", str(state_dir), "--run-id", run_id, "--json", "--controls", "none"),
    ]


def test_a_sub_agent_killed_part_way_resumes_and_every_request_is_counted_once(
    slow_provider: AppServer, workspace: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "st" / "p.trace.jsonl"
    args = [*common(slow_provider, workspace, tmp_path / "st", "research", "p"), "--research-model", "research.child"]
    process = start("run", "What happened?", *args)
    while not sum(e["type"] == "turn" and e["run_id"] == "p.c1" for e in read_trace(trace)) >= 2:
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    resumed = harness("resume", "p", "--state-dir", str(tmp_path / "st"), "--json")
    assert resumed.returncode == 0, resumed.stderr
    state = FileStore(tmp_path / "st").load("p")
    child_turns = [e["turn"] for e in read_trace(trace) if e["type"] == "turn" and e["run_id"] == "p.c1"]
    assert child_turns == [1, 2, 3]  # the child went on from turn 3: turns 1 and 2 were not bought again
    assert state.children["c1"].usage.requests == 3 == state.child_usage.requests
    assert last_json(resumed.stdout)["child_cost_usd"] == pytest.approx(state.children["c1"].usage.cost_usd)


# --- orphans, and a delete that already happened -----------------------------------------------------------------
def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def test_a_deadline_ends_a_run_inside_a_long_command_with_its_state_saved(
    slow_provider: AppServer, workspace: Path, tmp_path: Path
) -> None:
    args = [*common(slow_provider, workspace, tmp_path / "st", "command", "d"), "--trusted-command", "check=sleep 60"]
    began = time.monotonic()
    done = harness_process("run", "Run the check", *args, "--timeout", "2")
    assert done.returncode == 5 and "deadline of 2s reached" in done.stderr, done.stderr
    assert time.monotonic() - began < 2 + 5 + 5  # within T + 5 s of its start, and the interpreter's own start
    state = json.loads((tmp_path / "st" / "d.json").read_text())
    deadline = time.monotonic() + 5
    while any(group_alive(g) for g in state["processes"].values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert state["status"] == "interrupted" and not any(group_alive(g) for g in state["processes"].values())


def test_a_command_dies_with_a_killed_harness(slow_provider: AppServer, workspace: Path, tmp_path: Path) -> None:
    preset = "check=sleep 60"
    args = [*common(slow_provider, workspace, tmp_path / "st", "command", "c"), "--trusted-command", preset]
    process = start("run", "Run the check", *args)
    state_file = tmp_path / "st" / "c.json"
    while not (state_file.exists() and json.loads(state_file.read_text()).get("processes")):
        assert process.poll() is None, process.communicate()
        time.sleep(0.01)
    group = next(iter(json.loads(state_file.read_text())["processes"].values()))
    assert group_alive(group)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    deadline = time.monotonic() + 5
    while group_alive(group) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not group_alive(group)  # the supervisor took the whole group down with the harness
    resumed = harness("resume", "c", "--state-dir", str(tmp_path / "st"), "--json")
    assert (
        resumed.returncode == 5
        and f"process group {group} ended with the harness" in last_json(resumed.stdout)["reason"]
    )


async def test_a_delete_that_already_happened_reports_success_when_retried(workspace: Path) -> None:
    state = new_run("clean up")
    state.messages.append(calls(("c1", "delete_file", {"path": "access.log"})))
    state.approvals["c1"] = fingerprint({"path": "access.log"})
    state.started.append("c1")  # the earlier process began the delete, and died before recording it
    (workspace / "access.log").unlink()  # ... after the delete had happened
    tools = Registry(
        [ListFiles(Workspace(workspace)), ReadFile(Workspace(workspace)), DeleteFile(Workspace(workspace))]
    )
    done = await run(state, tools, RunOptions(model=script("(turn 0 is above)", "Deleted it."), controls=PLAIN))
    assert tool_messages(done.messages)[0]["content"].startswith("Deleted access.log (the attempt before")
    assert done.status == "completed"


# --- tracebacks and unchecked limits -------------------------------------------------------------------------------
def test_a_state_file_with_wrong_types_is_an_error_naming_the_field(tmp_path: Path, workspace: Path) -> None:
    good = json.loads(new_run("q").to_json()) | {"run_id": "r"}
    for field, value, named in (
        ("messages", "x", "messages"),
        ("turns", "three", "turns"),
        ("limits", {"max_turns": -1}, "limits"),
    ):
        (tmp_path / "r.json").write_text(json.dumps(good | {field: value}))
        done = harness("resume", "r", "--state-dir", str(tmp_path))
        assert done.returncode == 2 and f"field {named}" in done.stderr and str(tmp_path / "r.json") in done.stderr
        no_traceback(done)


def test_a_retry_after_that_is_not_a_time_falls_back_to_backoff() -> None:
    for header in ("soon", "", "nan", "Mon, 99 Foo 2026", "1e999"):
        wait = retry_after(httpx.Response(503, headers={"retry-after": header}), 0, 0.1)
        assert 0 <= wait <= 30


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--max-turns", "-1"], "max_turns must be above 0"),
        (["--max-budget-usd", "-5"], "max_budget_usd must be at least 0"),
        (["--max-budget-usd", "nan"], "finite number"),
        (["--timeout", "0"], "timeout must be above 0"),
        (["--timeout", "nan"], "finite number"),
        (["--price-input", "-1"], "input price"),
        (["--run-id", "a/b"], "invalid run id"),
        (["--run-id", "../../evil"], "invalid run id"),
        (["--base-url", "http://[::1/v1"], "invalid base URL"),
        (["--command", "x=echo 'a"], "cannot split"),
        (["--tools", "list_files,rm_rf"], "unknown tools"),
    ],
)
def test_bad_settings_are_a_sentence_and_exit_2(workspace: Path, tmp_path: Path, args: list[str], needle: str) -> None:
    done = harness(
        "run", "q", "--model", "plan", "--workspace", str(workspace), "--state-dir", str(tmp_path / "st"), *args
    )
    assert done.returncode == 2 and needle in done.stderr, done.stderr
    no_traceback(done)
    assert not list(tmp_path.rglob("evil*")) and not (tmp_path.parent / "evil.lock").exists()


def test_a_commands_or_state_file_that_cannot_be_read_is_a_sentence_and_exit_2(workspace: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000)
    (tmp_path / "folder.toml").mkdir()
    for path, needle in ((deep, "nested too deeply"), (tmp_path / "folder.toml", "not a regular file"),
                         (Path("/proc/self/mem"), "cannot read the commands file")):  # fmt: skip
        done = harness("run", "q", "--model", "plan", "--workspace", str(workspace), "--commands-file", str(path),
                       "--state-dir", str(tmp_path / "st"))  # fmt: skip
        assert done.returncode == 2 and needle in done.stderr, done.stderr
        no_traceback(done)
    (tmp_path / "st2" / "r.json").mkdir(parents=True)
    done = harness("resume", "r", "--state-dir", str(tmp_path / "st2"))
    assert done.returncode == 2 and "the state file is not a regular file" in done.stderr, done.stderr


def test_a_state_dir_that_is_a_file_and_unknown_options(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    done = harness("run", "q", "--model", "plan", "--workspace", str(workspace), "--state-dir", str(tmp_path / "file"))
    assert done.returncode == 2 and "is a file, not a folder" in done.stderr
    bogus = harness("--bogus")
    assert bogus.returncode == 2 and "'--bogus' is not an action" in bogus.stderr
    no_traceback(done)
    no_traceback(bogus)


def test_an_existing_run_is_never_replaced(scripted: AppServer, workspace: Path, tmp_path: Path) -> None:
    args = [
        "--base-url",
        scripted.base_url,
        "--model",
        "destructive",
        "--workspace",
        str(workspace),
        "--controls",
        "none",
        "--tools",
        "list_files,delete_file",
    ]
    args += ["--state-dir", str(tmp_path), "--run-id", "dup"]
    first = harness("run", "Clean up", *args)
    assert first.returncode == 5  # waiting for approval of the delete
    before = (tmp_path / "dup.json").read_text()
    again = harness("run", "Something else", *args)
    assert again.returncode == 2 and "already exists" in again.stderr
    assert (tmp_path / "dup.json").read_text() == before


# --- round two: files a person names, signals early, odd names ----------------------------------------------------
def run_args(scripted: AppServer, workspace: Path, tmp_path: Path, *more: str) -> list[str]:
    state_dir = str(tmp_path / "st")
    return ["run", "Which file mentions a timeout?", "--base-url", scripted.base_url, "--model", "plan",
            "--workspace", str(workspace), "--state-dir", state_dir, *more]  # fmt: skip


def test_a_fifo_named_as_trace_commands_file_or_state_file_is_refused_not_waited_on(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "fifo")
    fifo = str(tmp_path / "fifo")
    for flags in (["--trace", fifo], ["--commands-file", fifo]):
        done = harness_process(*run_args(scripted, workspace, tmp_path, *flags), timeout=20)
        assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
        no_traceback(done)
    (tmp_path / "st").mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "st" / "run-fifo.json")
    shown = harness_process("show", "run-fifo", "--state-dir", str(tmp_path / "st"), timeout=20)
    assert shown.returncode == 2 and "not a regular file" in shown.stderr
    no_traceback(shown)


def test_a_trace_in_a_missing_folder_is_refused_and_none_is_created(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    done = harness(*run_args(scripted, workspace, tmp_path, "--trace", str(tmp_path / "no" / "such" / "t.jsonl")))
    assert done.returncode == 2 and "does not exist" in done.stderr and not (tmp_path / "no").exists()


async def test_a_trace_that_fails_to_write_or_close_never_changes_how_a_run_ends(tmp_path: Path) -> None:
    sink = JsonlTrace("/dev/full")  # every write fails with ENOSPC, and so does the close
    result = await run(new_run("q"), Registry([Recorder()]), RunOptions(model=script("done"), trace=sink))
    sink.close()
    assert (result.status, result.answer) == ("completed", "done")


def test_a_commands_file_with_wrong_types_or_no_end_is_refused(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    for body, words in (
        ('[commands.c]\nargv = "echo"\n', "argv"),
        ('[commands.c]\nargv = ["echo"]\nneeds_approval = 0\n', "needs_approval"),
        ('[commands.c]\nargv = ["echo"]\ntimeout_s = -1\n', "timeout_s"),
    ):
        (tmp_path / "c.toml").write_text(body)
        done = harness(*run_args(scripted, workspace, tmp_path, "--commands-file", str(tmp_path / "c.toml")))
        assert done.returncode == 2 and words in done.stderr, done.stderr
    endless = harness_process(*run_args(scripted, workspace, tmp_path, "--commands-file", "/dev/zero"), timeout=20)
    assert endless.returncode == 2 and "not a regular file" in endless.stderr


def test_an_empty_workspace_is_refused_not_read_as_the_current_folder(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    done = harness("run", "q", "--base-url", scripted.base_url, "--model", "plan", "--workspace", "",
                   "--state-dir", str(tmp_path / "st"))  # fmt: skip
    assert done.returncode == 2 and "--workspace is empty" in done.stderr


def test_ctrl_c_while_the_harness_starts_ends_it_quietly(workspace: Path, tmp_path: Path) -> None:
    # A peer that accepts and never answers: the run cannot finish before the signal, however fast the machine.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        for delay in (0.3, 0.6, 1.2):  # while importing, starting, or waiting on the peer
            process = start("run", "Which file mentions a timeout?", "--base-url", base_url, "--model", "plan",
                            "--workspace", str(workspace), "--state-dir", str(tmp_path / "st"),
                            "--run-id", f"early-{int(delay * 100)}")  # fmt: skip
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=30)
            assert "Traceback" not in err, err
            assert process.returncode in (130, 5), (process.returncode, err)  # 5: the run had begun, and stopped


def test_a_write_cut_short_leaves_nothing_the_model_can_list_or_read(workspace: Path) -> None:
    space = Workspace(workspace)
    (workspace / f"{TEMP_PREFIX}notes.txt.123.456").write_bytes(b"x" * 1_000_000)  # a kill mid-write left it
    assert [e.path for e in space.entries()[0]] == ["access.log", "errors.log", "notes.txt"]
    with pytest.raises(ToolError, match="no such file"):
        space.read_bytes(f"{TEMP_PREFIX}notes.txt.123.456", 10)
    space.write_atomic("notes.txt", b"new")
    assert sorted(p.name for p in workspace.iterdir()) == ["access.log", "errors.log", "notes.txt"]


async def test_a_name_with_a_newline_cannot_add_lines_to_a_listing(workspace: Path) -> None:
    (workspace / "evil\nerrors.log (999 bytes)").write_text("x")
    listing = await ListFiles(Workspace(workspace)).run({}, tool_context())
    lines = listing.text.splitlines()
    assert lines[0] == "4 files, largest first:" and len(lines) == 5
    assert '"evil\\nerrors.log (999 bytes)" (1 bytes)' in lines
    read = await ReadFile(Workspace(workspace)).run({"path": "evil\nerrors.log (999 bytes)"}, tool_context())
    assert read.text == "x"


def test_a_path_ending_in_a_slash_names_a_folder_not_the_file(workspace: Path) -> None:
    space = Workspace(workspace)
    for act in (lambda: space.read_bytes("notes.txt/", 10), lambda: space.delete("notes.txt/")):
        with pytest.raises(ToolError, match="names a folder"):
            act()
    assert (workspace / "notes.txt").exists()


def test_sigterm_while_a_command_runs_stops_the_run_without_a_traceback(
    scripted: AppServer, workspace: Path, tmp_path: Path
) -> None:
    process = start("run", "run check", "--base-url", scripted.base_url, "--model", "command", "--workspace",
                    str(workspace), "--trusted-command", "check=sleep 30", "--tools", "run_command",
                    "--state-dir", str(tmp_path / "st"))  # fmt: skip
    assert process.stderr is not None
    before = "".join(iter_until(process.stderr, "running run_command"))  # the command has started
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    err = before + err
    assert process.returncode == 5 and "reason: terminated" in err
    assert "Traceback" not in err and "never retrieved" not in err, err


def iter_until(stream: IO[str], marker: str) -> Iterator[str]:
    """The lines of a process's stream up to the first holding `marker` (or to its end, if none does)."""
    for line in stream:
        yield line
        if marker in line:
            return
