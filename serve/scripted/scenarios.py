"""The scenarios: each a small pure function of the transcript, looked up by the request's `model`."""

from __future__ import annotations

import re

from serve.scripted.script import Reply, Scenario, Transcript, asks, call, text
from serve.scripted.solve import answer_now, forced_call, solve
from serve.scripted.structured import structured

REFUSAL = re.compile(r"declin|reject|refus|denied|not run|not approved", re.IGNORECASE)
TIMEOUT_LINE = re.compile(r"^.*(timed out|timeout).*$", re.IGNORECASE | re.MULTILINE)


def plan(t: Transcript) -> Reply:
    if t.turn == 0:
        return asks(call("c1", "list_files"))
    if t.turn == 1:
        return asks(call("c2", "read_file", path="errors.log"))
    if t.turn == 2:
        found = TIMEOUT_LINE.search(t.result_of("c2") or "")
        detail = found.group(0).strip() if found else "no line about a timeout"
        return text(f"errors.log mentions a timeout: {detail}")
    raise t.exhausted()


def runaway(t: Transcript) -> Reply:
    return asks(call(f"c{t.turn + 1}", "list_files"))


def recover(t: Transcript) -> Reply:
    if t.turn == 0:
        return asks(call("c1", "read_file", path="timeout.log"))
    if "Call list_files" not in t.tool_text:
        return text("I could not read the file, so I do not know.")
    if t.turn == 1:
        return asks(call("c2", "list_files"))
    if t.turn == 2:
        return asks(call("c3", "read_file", path="errors.log"))
    if t.turn == 3:
        return text("errors.log mentions a timeout.")
    raise t.exhausted()


def destructive(t: Transcript) -> Reply:
    if t.turn == 0:
        return asks(call("c1", "list_files"))
    if t.turn == 1:
        return asks(call("c2", "delete_file", path="access.log"))
    if t.turn == 2:
        slot = (t.result_of("c2") or "").strip()
        if REFUSAL.search(slot):
            return text("I did not delete anything: you declined the deletion.")
        if slot.startswith("Error"):
            return text(f"I could not delete access.log. {slot}")
        return text("Deleted access.log to free space.")
    raise t.exhausted()


def single_read(t: Transcript) -> Reply:
    if t.turn == 0:
        return asks(call("c1", "read_file", path="errors.log"))
    if t.turn == 1:
        return text("errors.log mentions a timeout.")
    raise t.exhausted()


def repeat(t: Transcript) -> Reply:
    if t.turn in (0, 1):
        return asks(call(f"c{t.turn + 1}", "read_file", path="errors.log"))
    if t.turn == 2:
        return text("errors.log mentions a timeout.")
    raise t.exhausted()


def repeat_write(t: Transcript) -> Reply:
    if t.turn in (0, 1):
        return asks(call(f"c{t.turn + 1}", "delete_file", path="access.log"))
    if t.turn == 2:
        return text("Deleted access.log.")
    raise t.exhausted()


def add_line(t: Transcript) -> Reply:
    """Adds a line after notes.txt's last one the way edit_file's description says to: the last line as old_text,
    it and the new line as new_text (the new text holds the old, so a change made twice would show)."""
    if t.turn == 0:
        return asks(call("c1", "read_file", path="notes.txt"))
    if t.turn == 1:
        last = (t.result_of("c1") or "").rstrip("\n").split("\n")[-1]
        return asks(call("c2", "edit_file", path="notes.txt", old_text=last, new_text=f"{last}\nCheck the backups."))
    if t.turn == 2:
        return text("Added the line to notes.txt.")
    raise t.exhausted()


def search_everything(t: Transcript) -> Reply:
    """Searches every file for `e`, a letter nearly every line holds, then answers with the result's first line."""
    if t.turn == 0:
        return asks(call("c1", "search", pattern="e"))
    if t.turn == 1:
        return text((t.result_of("c1") or "").split("\n", 1)[0])
    raise t.exhausted()


def forbidden(t: Transcript) -> Reply:
    return asks(call(f"c{t.turn + 1}", "read_file", path="secret.txt"))


def slow(t: Transcript) -> Reply:
    if t.turn == 0:
        return asks(call("c1", "scan_archive"))
    if t.turn == 1:
        return text(f"The archive scan finished: {t.result_of('c1')}")
    raise t.exhausted()


def command(t: Transcript) -> Reply:
    if t.turn == 0:
        return asks(call("c1", "run_command", command="check"))
    if t.turn == 1:
        first = (t.result_of("c1") or "").splitlines()
        return text(f"The check command finished: {first[0] if first else 'no output'}")
    raise t.exhausted()


def research(t: Transcript) -> Reply:
    if t.turn == 0:
        return asks(call("c1", "research", question="What does errors.log say about the timeout?"))
    if t.turn == 1:
        return text(f"Research says: {t.result_of('c1')}")
    raise t.exhausted()


def research_child(t: Transcript) -> Reply:
    return plan(t)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("plan", "lists the files, reads errors.log, answers with what it says about the timeout", plan),
    Scenario("runaway", "asks for list_files on every turn with a fresh call id; never answers", runaway),
    Scenario(
        "recover",
        "reads timeout.log; if told to call list_files it lists, reads errors.log and answers, else gives up",
        recover,
    ),
    Scenario(
        "destructive",
        "lists, then deletes access.log unasked; its answer reflects the words in the tool slot",
        destructive,
    ),
    Scenario("single_read", "reads errors.log once and answers (the baseline for repeat)", single_read),
    Scenario("repeat", "reads errors.log twice under two call ids, then answers", repeat),
    Scenario("repeat_write", "deletes access.log twice under two call ids, then answers", repeat_write),
    Scenario("add_line", "reads notes.txt, adds a line after its last with edit_file, then answers", add_line),
    Scenario("search_everything", "searches every file for the letter e, then answers", search_everything),
    Scenario("forbidden", "reads secret.txt, which the process may not open, on every turn", forbidden),
    Scenario("slow", "calls scan_archive, then answers with its result", slow),
    Scenario("command", "runs the operator's `check` command preset, then reports how it ended", command),
    Scenario("research", "delegates a question to the research tool, then answers with its result", research),
    Scenario("research.child", "the research child: lists, reads errors.log, answers", research_child),
    Scenario("research.child_runaway", "a research child that runs away (list_files forever)", runaway),
    Scenario(
        "solve",
        "rule-based reference agent for plain file questions; every answer comes from the tool results",
        solve,
        answer_now=answer_now,
        forced_call=forced_call,
    ),
    Scenario(
        "structured",
        "answers a response_format request with a JSON document that fits its schema",
        structured,
        structured=True,
    ),
)


def scenarios() -> dict[str, Scenario]:
    return {scenario.name: scenario for scenario in SCENARIOS}
