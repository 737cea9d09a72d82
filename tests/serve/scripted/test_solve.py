"""`solve` answers the six file questions from the transcript alone, on two workspaces whose answers differ."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from tests.conftest import AppServer
from tests.serve.scripted.driver import drive, folder_tools, trajectory
from wire.digest import Finding, write

FIRST = {
    "errors.log": "INFO boot\nERROR worker 7 timed out after 30000 ms\n" + "INFO heartbeat ok\n" * 20,
    "access.log": "GET /index.html 200\n" * 5,
    "notes.txt": "Remember to rotate your logs.\n",
}
SECOND = {
    "server.log": "INFO listening\n" * 3,
    "jobs.log": "job 12 queued\njob 12 hit a timeout waiting for the lock\n",
    "todo.md": "- renew the certificate\n- rotating the logs weekly is overdue\n" + "- misc\n" * 40,
    "readme.txt": "Nothing to see.\n",
}


def build(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, content in files.items():
        (root / name).write_text(content)
    return root


@pytest.fixture(scope="module")
def client(scripted: AppServer) -> Iterator[OpenAI]:
    with OpenAI(base_url=scripted.base_url, api_key="unused", max_retries=0) as c:
        yield c


def expected(root: Path) -> dict[str, str]:
    """Ground truth computed from the files."""
    files = {p.name: p.read_text() for p in root.iterdir()}
    sizes = {p.name: p.stat().st_size for p in root.iterdir()}
    return {
        "timeout": next(n for n, c in files.items() if re.search(r"timeout|timed out", c)),
        "count": str(len(files)),
        "largest": max(sizes, key=lambda n: sizes[n]),
        "rotate": next(n for n, c in files.items() if re.search(r"rotat", c)),
    }


@pytest.mark.parametrize("files", [FIRST, SECOND], ids=["first", "second"])
def test_solve_answers_the_six_questions(client: OpenAI, tmp_path: Path, files: dict[str, str]) -> None:
    root = build(tmp_path / "ws", files)
    truth, tools = expected(root), folder_tools(root)

    def ask(question: str) -> tuple[list[str], str]:
        steps = trajectory(drive(client, "solve", question, tools))
        return steps, steps[-1]

    steps, answer = ask("Which file mentions a timeout?")
    assert answer.startswith(f"{truth['timeout']} mentions timeout") and len(steps) == 3
    others = [name for name in files if name != truth["timeout"]]
    assert not any(name in answer for name in others)
    steps, answer = ask("How many files are in the directory?")
    assert answer.startswith(f"There are {truth['count']} files") and steps[0] == "list_files({})" and len(steps) == 2
    target = "notes.txt" if "notes.txt" in files else "readme.txt"
    _, answer = ask(f"Read {target} and tell me what it says.")
    assert answer == f"{target} says: {files[target].strip()}"
    steps, answer = ask("List the files and then read each one.")
    assert steps[1].count("read_file") == len(files) and all(name in answer for name in files)
    _, answer = ask("Which file is the largest?")
    assert answer.startswith(f"The largest file is {truth['largest']} (")
    _, answer = ask("Is there a file about rotating logs?")
    assert answer.startswith(f"Yes: {truth['rotate']} is about rotating logs")


def test_the_two_workspaces_have_different_answers(tmp_path: Path) -> None:
    first, second = expected(build(tmp_path / "a", FIRST)), expected(build(tmp_path / "b", SECOND))
    assert all(first[key] != second[key] for key in first)


def test_solve_says_so_when_nothing_matches(client: OpenAI, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {"a.txt": "hello\n"})
    assert (
        trajectory(drive(client, "solve", "Is there a file about rotating logs?", folder_tools(root)))[-1]
        == "No, no file is about rotating logs."
    )
    assert (
        trajectory(drive(client, "solve", "Which file mentions a timeout?", folder_tools(root)))[-1]
        == "No file mentions timeout."
    )


UNSEEN = {
    "deploy.md": "Deployment checklist: bump the version, build, and restart the service.\n" * 3,
    "billing.csv": "customer,amount\nacme,120\nglobex,75\n",
    "incident.txt": "At 03:10 the database connection pool was exhausted and requests failed.\n",
    "readme": "Internal tools.\n",
}
PARAPHRASES = [
    ("Which of the files talks about the database connection pool?", lambda t, a: t["pool"] in a),
    ("What file reports exhausted connections?", lambda t, a: t["exhausted"] in a),
    ("Where is the restart of the service mentioned?", lambda t, a: t["restart"] in a),
    ("How many files does the folder hold?", lambda t, a: f"There are {t['count']} files" in a),
    ("Count the files in this directory.", lambda t, a: f"There are {t['count']} files" in a),
    ("What's the biggest file here?", lambda t, a: t["largest"] in a and "largest" not in a.split()[1:2]),
    ("Which file is the smallest?", lambda t, a: t["smallest"] in a),
    ("What does billing.csv contain?", lambda t, a: "acme,120" in a),
    ("Open incident.txt and show me what's in it.", lambda t, a: "connection pool was exhausted" in a),
    ("Open every file and summarise each one.", lambda t, a: all(name in a for name in UNSEEN)),
    ("Are there any files about deployment?", lambda t, a: a.startswith("Yes") and "deploy.md" in a),
    ("Does any file mention invoices?", lambda t, a: a.startswith("No")),
]


@pytest.mark.parametrize(("question", "right"), PARAPHRASES, ids=[q for q, _ in PARAPHRASES])
def test_solve_reads_questions_asked_in_other_words_on_a_workspace_it_has_not_seen(
    client: OpenAI, tmp_path: Path, question: str, right: Any
) -> None:
    root = build(tmp_path / "ws", UNSEEN)
    sizes = {p.name: p.stat().st_size for p in root.iterdir()}
    texts = {p.name: p.read_text() for p in root.iterdir()}
    truth = {
        "pool": next(n for n, c in texts.items() if "connection pool" in c),
        "exhausted": next(n for n, c in texts.items() if "exhausted" in c),
        "restart": next(n for n, c in texts.items() if "restart" in c),
        "count": str(len(texts)),
        "largest": max(sizes, key=lambda n: sizes[n]),
        "smallest": min(sizes, key=lambda n: sizes[n]),
    }
    answer = trajectory(drive(client, "solve", question, folder_tools(root)))[-1]
    assert right(truth, answer), answer


@pytest.mark.parametrize("files", [FIRST, SECOND], ids=["first", "second"])
def test_solve_answers_a_digest_from_the_results_in_it(client: OpenAI, tmp_path: Path, files: dict[str, str]) -> None:
    """Asked as a digest (the question beside the results, no tools), solve answers from what the digest holds."""
    root = build(tmp_path / "ws", files)
    truth = expected(root)
    listing = "\n".join(f"{p.name} ({p.stat().st_size:,} bytes)" for p in sorted(root.iterdir()))
    found = [Finding("list_files", {}, listing)]
    found += [Finding("read_file", {"path": p.name}, p.read_text()) for p in sorted(root.iterdir())]

    def answer(question: str, findings: list[Finding]) -> str:
        message = {"role": "user", "content": write(question, findings)}
        reply = client.chat.completions.create(model="solve", messages=[message])  # type: ignore[list-item]
        return reply.choices[0].message.content or ""

    assert answer("Which file is the largest?", found).startswith(f"The largest file is {truth['largest']} (")
    assert answer("Which file mentions a timeout?", found).startswith(f"{truth['timeout']} mentions timeout")
    assert answer("How many files are in the directory?", found[:1]).startswith(f"There are {truth['count']} files")
    assert "not looked" in answer("Which file mentions a timeout?", [])
