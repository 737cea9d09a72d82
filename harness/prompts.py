"""Every sentence the loop and its controls say to a model, in one place: the system prompt, what a slot the
harness fills instead of running a call says, and what an answer that is not one yet is asked. (A tool's own
results and errors are written by the tool.)

The default system prompt is written for small models: plain, short, and explicit about when to stop
calling tools. Nothing here names a task's words: no file names, no subjects. The digest an answer
turn may be asked in is a format both ends read, so it lives in `wire.digest`.
"""

from __future__ import annotations

from collections.abc import Sequence

SYSTEM_PROMPT = (
    "You answer questions about the files in a folder, using tools. Never guess a file name: list the files to see "
    "which exist and how big they are. Never guess what a file says: read it. To find which file says something, "
    "read every file that might. When the tool results contain the answer, stop calling tools and answer in one or "
    "two plain sentences that state the facts themselves (file names, numbers, the words a file contains). Asked what "
    "a file says, quote every line of it."
)
SEARCHING = "read every file that might."
SEARCHING_WITH_SEARCH = "search the files for its words, then read what the search finds."


class ForTools:
    """The default system prompt, written for the tools of the run it starts (see `system_prompt`)."""


FOR_TOOLS = ForTools()


def system_prompt(tools: Sequence[str]) -> str:
    """The default system prompt for a run with these tools: with `search`, it is how to find what a file says."""
    return SYSTEM_PROMPT.replace(SEARCHING, SEARCHING_WITH_SEARCH) if "search" in tools else SYSTEM_PROMPT


GENERIC_SYSTEM_PROMPT = (  # the earlier, generic prompt, kept to measure what the small-model prompt is worth
    "You are a careful assistant working in a folder of files. Use the tools to look before you answer. "
    "When you have the answer, reply in plain text without calling a tool."
)
RESEARCH_SYSTEM = (
    "You are a research assistant. Use the tools to investigate the question, then answer it in one or two sentences."
)


NOT_RUN = "Not run"  # how every slot the harness fills instead of running a call begins
ERROR = "Error: "  # how every slot of a call that failed begins


def not_run(why: str) -> str:
    return f"{NOT_RUN}: {why}."


def stopped_first(reason: str) -> str:
    return not_run(f"the run stopped first ({reason})")


def declined(tool: str, reason: str | None) -> str:
    """The words a refused call leaves in its slot, so the model's report cannot claim it happened."""
    text = f"{NOT_RUN}: the user declined this {tool} call, so nothing was done."
    return f"{text} Reason: {reason}" if reason else text


def unknown_tool(name: str, names: Sequence[str]) -> str:
    return f"{ERROR}unknown tool {name!r}. The tools are: {', '.join(names)}."


def repeated_call(tool: str, earlier_call: str) -> str:
    return (
        f"{NOT_RUN} again: you already called {tool} with exactly these arguments (call {earlier_call}), and its "
        "result is above. Use that result to answer, or call a different tool."
    )


def repeated_change(tool: str, earlier_call: str) -> str:
    return (
        f"{NOT_RUN} again: you already made exactly this change with {tool} (call {earlier_call}), and it succeeded. "
        "Say what you changed, or make a different change."
    )


def empty_reply(question: str) -> str:
    """The re-ask after an empty reply: the question again, so there is something to answer."""
    return f"Answer the question in plain words, or call a tool if you need one. The question was: {question}"


def make_the_call(tools: Sequence[str]) -> str:
    """The re-ask of an answer that described a change (which tool to call, with what) instead of making it."""
    names = " or ".join(tools)
    return f"You described a call to {names} instead of making it. Make that call now, with the arguments you gave."


def write_it(path: str, tools: Sequence[str]) -> str:
    """The re-ask of an answer that gave the content of a file the question names, which does not exist yet."""
    tool = "write_file" if "write_file" in tools else " or ".join(tools)
    return (
        f"Your answer gives what {path} should hold, but {path} was not written: it does not exist. "
        f"If the question asks for that file, call {tool} now to write it."
    )


UNREAD = " exists and you had not read it, so "
HOLDS = " It holds:\n"


def read_first(path: str, tool: str, holds: str, advice: str) -> str:
    """The slot of a change to a file the run had not read: what the file holds, and what to call next (one
    line: `shown_unread` reads the slot back)."""
    return f"{NOT_RUN}: {path}{UNREAD}{tool} would have changed it unseen.{HOLDS}{holds}\n{advice}"


def shown_unread(slot: str) -> tuple[str, str] | None:
    """The path and what it holds, of a slot `read_first` wrote (None for any other slot)."""
    head, holds_sep, rest = slot.partition(HOLDS)
    path, unread_sep, _ = head.removeprefix(f"{NOT_RUN}: ").partition(UNREAD)
    if not holds_sep or not unread_sep or not head.startswith(f"{NOT_RUN}: ") or "\n" in head:
        return None
    return path, rest.rpartition("\n")[0]


def changed_since(path: str, tool: str, holds: str) -> str:
    """The slot of a change to a file that changed on disk since the run read it."""
    return (
        f"{NOT_RUN}: {path} changed on disk since you read it (someone saved it meanwhile), and {tool} would have "
        f"overwritten that change. It holds now:\n{holds}\nMake the change again on this text if it is still wanted."
    )


def refused_again(path: str, tool: str, advice: str) -> str:
    """The slot of a change refused for want of reading, made again unchanged after the file was shown."""
    return f"{NOT_RUN}: this {tool} call is the one not run above, made again; it would change {path} unseen. {advice}"


def ungrounded(found: str, evidence: list[str]) -> str:
    """The re-ask of an answer that rests on nothing the tools returned: what it claimed, and the lines of the
    results that bear most on the question."""
    lines = "".join(f"\n  {line}" for line in evidence)
    shown = f" The lines of the results that bear most on the question:{lines}" if evidence else ""
    return (
        f"Your answer gives {found}: none of the tool results shows that.{shown}\n"
        "Answer the question again from what the tools returned, or call a tool to find out."
    )


def change_alone(tool: str) -> str:
    """The slot of a change made in a reply that holds other calls."""
    return (
        f"{NOT_RUN}: {tool} changes files, so it is called alone, in a reply of its own, once you have seen the "
        "results of the calls it depends on. If it is still the change to make, call it again on its own."
    )
