"""look_first: the first turns must call a tool, and the first call is the model's choice among real ones."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.controls.base import Hooks
from harness.core.protocols import Tool
from harness.core.registry import NO_ARGUMENTS
from harness.core.turn import FolderIndex, RunContext, Turn
from harness.tools.roles import ListsFolders, NamesSymbol, ReadsOneFile, SearchesText

FILES_OFFERED = 5  # files the index ranks first that a first read may name
WORDS_OFFERED = 6  # words of the question this folder holds that a first search may look for


@dataclass(frozen=True)
class LookFirst(Hooks):
    """The first `turns` turns must call a tool (tool_choice required): small models otherwise announce a call
    in words, or guess, and stop.

    The first call is the model's to choose, among calls that can only find something real. On a server that
    takes `tool_parameters`, each tool's arguments on that turn are kept to what the workspace's index holds
    for the question (the index ranks the question against this folder, in any language; nothing here reads
    its words): a read may name the files the question names and the files the index ranks first; a search
    may look for the question's words that the folder's files hold (the names its code defines first); a
    symbol lookup may name those of them the code defines; a tool that needs no argument (a listing, the
    manifests, the map of the code) is called without one. A tool whose arguments have no candidate is set
    aside for that turn. Where the question yields no candidate at all (a question in words the folder never
    uses), or on a server that cannot narrow calls, the first call goes to the one tool that needs no
    arguments, if there is exactly one (the listing, when others need none either): a look around needs no
    guess."""

    name: ClassVar[str] = "look_first"
    turns: int = 2  # a look and a read
    tool_parameters: bool = False  # the server narrows calls by the `tool_parameters` field

    def before_request(self, run: RunContext, turn: Turn) -> None:
        request = turn.request
        if not request.tools:
            return
        looked = sum(1 for m in run.state.messages if m["role"] == "assistant" and m.get("tool_calls"))
        if looked >= self.turns:
            return
        turn.require()
        if looked:
            return
        narrowing = self.candidates(run, turn) if self.tool_parameters and run.index is not None else {}
        if any(schema is not NO_ARGUMENTS for schema in narrowing.values()):
            offered = [d["function"]["name"] for d in request.tools]
            turn.set_aside({name for name in offered if name not in narrowing})
            turn.narrow(narrowing)
            return
        bare = [t["function"]["name"] for t in request.tools if not t["function"].get("parameters", {}).get("required")]
        listings = [name for name in bare if isinstance(run.tools.get(name), ListsFolders)]
        bare = listings if len(bare) > 1 and len(listings) == 1 else bare
        if len(bare) == 1:
            turn.require(bare[0])
            if self.tool_parameters:
                turn.narrow({bare[0]: NO_ARGUMENTS})

    def candidates(self, run: RunContext, turn: Turn) -> dict[str, Mapping[str, Any]]:
        """Per tool that may be called first, the schema its arguments are decoded with."""
        assert run.index is not None
        question, offered = run.state.question, {d["function"]["name"] for d in turn.request.tools}
        narrowing: dict[str, Mapping[str, Any]] = {}
        for tool in run.tools:
            if tool.name not in offered or not tool.read_only:
                continue
            schema = first_arguments(tool, run.index, question)
            if schema is not None:
                narrowing[tool.name] = schema
        return narrowing


def first_arguments(tool: Tool, index: FolderIndex, question: str) -> Mapping[str, Any] | None:
    """The arguments a tool's first call may have, as a schema: a parameter that names a file, a text to look
    for or a name the code defines kept to the index's candidates; none for a tool that needs no argument;
    None when the index offers nothing real for it."""
    required = list(tool.parameters.get("required") or ())
    if not required:
        return NO_ARGUMENTS
    if isinstance(tool, ReadsOneFile) and required == [tool.path_parameter]:
        named = index.named(question).files
        ranked = [path for path, _ in index.files_for(question, FILES_OFFERED)]
        return only(tool.path_parameter, list(dict.fromkeys([*named, *ranked])))
    if isinstance(tool, NamesSymbol) and required == [tool.symbol_parameter]:
        defined = index.defined_names()
        return only(tool.symbol_parameter, [w for w in index.words_here(question) if w in defined][:WORDS_OFFERED])
    if isinstance(tool, SearchesText) and required == [tool.pattern_parameter]:
        return only(tool.pattern_parameter, index.words_here(question)[:WORDS_OFFERED])
    return None


def only(parameter: str, values: list[str]) -> Mapping[str, Any] | None:
    if not values:
        return None
    return {"type": "object", "properties": {parameter: {"enum": values}}, "required": [parameter],
            "additionalProperties": False}  # fmt: skip
