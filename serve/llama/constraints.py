"""Grammars that constrain generation, on llguidance: tool calls in every form the dialect knows, JSON replies.

Why llguidance rather than llama.cpp's GBNF path: it compiles any JSON Schema without crashing (a quoted
property name or an empty enum is an error message, not a segfault), computes a token mask in microseconds,
and tells which tokens the grammar forces next, which is what jump-forward decoding needs.

A tool call is written `{"name": <offered tool>, "arguments": <valid for that tool>}`, in one of the
dialect's forms: bare (one per line when parallel), inside a ```json fence, as a list, with doubled
braces, or inside <tool_call> blocks after free text. The opening is free (whatever whitespace the model
chose); from the tool name on, the separators are fixed, so most of a call is forced and costs no sampling.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import llguidance
from llguidance.gbnf_to_lark import gbnf_to_lark

from models.dialects import CLOSE, OPEN
from serve.core.validation import resolved
from serve.errors import InvalidRequest
from serve.llama.compiler import Compiler
from wire.types import ToolDefinition

Family = Literal["anchored", "tagged", "fenced", "required"]
FAMILIES: tuple[Family, ...] = ("anchored", "tagged", "fenced")  # the forms a call opened in auto mode takes
MAX_CALLS = 8  # per reply: a model repeating itself is cut off by the grammar, not by max_tokens
JSON_STYLE = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
WHITESPACE = "[ \\t\\n]{1,20}"  # at most 20 between two tokens of a call, as llama.cpp's JSON grammars allow
FLEXIBLE_STYLE = {"whitespace_flexible": True, "whitespace_pattern": "[ \\t\\n]{0,20}"}
EMPTY_OBJECT: Mapping[str, Any] = {"type": "object", "properties": {}}
MATCHERS = 64  # compiled grammars kept


@dataclass(frozen=True)
class ToolGrammar:
    """Which tools, whether several calls may come in one reply, and whether the tag is a special token."""

    tools: tuple[tuple[str, str], ...]  # (name, schema as JSON)
    parallel: bool
    special_tag: bool
    flexible: bool = False  # whitespace free all the way (when the model's own spacing ran past the name)

    @classmethod
    def of(
        cls, tools: Sequence[ToolDefinition], parallel: bool, special_tag: bool, budget: int | None = None
    ) -> ToolGrammar:
        """`budget`: the tokens a forced call must end within; its free-form values are bounded to share it."""

        def generated(schema: Mapping[str, Any]) -> str:
            out = closed(schema)
            return json.dumps(bounded(out, value_chars(out, budget)) if budget else out, sort_keys=True)

        pairs = tuple(
            (t["function"]["name"], generated(t["function"].get("parameters") or EMPTY_OBJECT)) for t in tools
        )
        return cls(pairs, parallel, special_tag)

    def common(self) -> str:
        if self.flexible:
            after = '"," WS? "\\"arguments\\"" WS? ":" WS?'
            names = " | ".join(f'"\\"{name}\\"" WS? {after} args_{i}' for i, (name, _) in enumerate(self.tools))
        else:  # name, separator and key as one literal: once the name is chosen, the rest is forced
            names = " | ".join(f'"\\"{name}\\", \\"arguments\\": " args_{i}' for i, (name, _) in enumerate(self.tools))
        style = FLEXIBLE_STYLE if self.flexible else JSON_STYLE
        rules = "\n".join(args_rule(f"args_{i}", schema, style) for i, (_, schema) in enumerate(self.tools))
        return (
            'call: "{" WS? "\\"name\\"" WS? ":" WS? name_args WS? "}"\n'
            f"name_args: {names}\nWS: /{WHITESPACE}/\n{rules}\n"
        )

    def tags(self) -> tuple[str, str]:
        return (OPEN, CLOSE) if self.special_tag else (json.dumps(OPEN), json.dumps(CLOSE))

    def anchored(self) -> str:
        more = f"(SEP call){{0,{MAX_CALLS - 1}}}" if self.parallel else ""
        items = f'("," WS? call){{0,{MAX_CALLS - 1}}}' if self.parallel else ""
        return (
            f"calls: call {more}\nSEP: /[ \\t]{{0,20}}\\n[ \\t\\n]{{0,20}}/\n"
            'fenced: "```" LANG? WS? (calls | listed) WS? "```"\nLANG: "json" | "JSON"\n'
            f'listed: "[" WS? call {items} WS? "]"\ndoubled: "{{" call "}}"\n'
            "anchored: calls | fenced | listed | doubled\n"
        )

    def tagged(self, with_text: bool) -> str:
        open_, close = self.tags()
        more = f"(WS? {open_} WS? call WS? {close}){{0,{MAX_CALLS - 1}}}" if self.parallel else ""
        if self.special_tag:
            head = "TEXT? " if with_text else ""
            return f"tagged: {head}{open_} WS? call WS? {close} {more}\nTEXT: /(?s:.+)/\n"
        if with_text:
            return f"tagged: head WS? call WS? {close} {more}\nhead[lazy]: ANYTEXT {open_}\nANYTEXT: /(?s:.*)/\n"
        return f"tagged: {open_} WS? call WS? {close} {more}\n"

    def with_document(self, document: str) -> str:
        """A reply that is a call or a JSON document (tools offered together with a response_format)."""
        return (
            f"start: WS? (anchored | tagged | doc)\ndoc: {document}\n"
            + self.anchored()
            + self.tagged(with_text=False)
            + self.common()
        )

    def lark(self, family: Family) -> str:
        """The whole reply's grammar, fed every token from the reply's first once the family is known."""
        if family == "anchored":
            return "start: WS? anchored\n" + self.anchored() + self.common()
        if family == "fenced":
            return (
                'start: head LANG? WS? (calls | listed) WS? "```"\nhead[lazy]: ANYTEXT "```"\nANYTEXT: /(?s:.*)/\n'
                + self.anchored()
                + self.common()
            )
        if family == "tagged":
            return "start: tagged\n" + self.tagged(with_text=True) + self.common()
        return "start: WS? (anchored | tagged)\n" + self.anchored() + self.tagged(with_text=False) + self.common()


SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")


def each_subschema(schema: Mapping[str, Any], change: Callable[[Mapping[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """A copy of the schema with `change` applied to each schema it holds directly."""
    out = dict(schema)
    for key in SUBSCHEMA_MAPS:
        if isinstance(out.get(key), Mapping):
            out[key] = {name: change(sub) if isinstance(sub, Mapping) else sub for name, sub in out[key].items()}
    for key in SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [change(sub) if isinstance(sub, Mapping) else sub for sub in out[key]]
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), Mapping):
            out[key] = change(out[key])
    return out


def closed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema a call is generated under: the calls it allows, less the free-form keys. An object whose
    schema says nothing of other keys holds only its declared properties (as `additionalProperties: false`
    would say), so a model can neither invent keys nor run on inside an open-ended one; what is generated is
    still valid for the schema the client sent."""
    out = each_subschema(schema, closed)
    declared: Mapping[str, Any] = out["properties"] if isinstance(out.get("properties"), Mapping) else {}
    required: list[Any] = out["required"] if isinstance(out.get("required"), list) else []
    is_object = out.get("type") == "object" or "properties" in out
    open_ended = "additionalProperties" not in out and "patternProperties" not in out
    if is_object and open_ended and all(name in declared for name in required):
        out["additionalProperties"] = False
    return out


CHARS_PER_TOKEN = 3  # about, for JSON values; a bound from it is loose for prose, tight for digits
MAX_DIGITS = 15
UNBOUNDED = frozenset(("enum", "const", "pattern", "format"))


ANNOTATIONS = frozenset(("description", "title", "$comment", "examples", "default", "deprecated"))


def anything(schema: Mapping[str, Any]) -> bool:
    """Whether a schema allows any value (`{}`, or annotations only)."""
    return not schema.keys() - ANNOTATIONS


def leaves(schema: Mapping[str, Any]) -> int:
    """How many free-form values (strings, numbers, arrays, values of any kind) a schema holds, counting each
    declared once."""
    kind = schema.get("type")
    own = 1 if kind in ("string", "integer", "number", "array") or anything(schema) else 0
    subs = [v for key in SUBSCHEMA_MAPS if isinstance(schema.get(key), Mapping) for v in schema[key].values()]
    subs += [v for key in SUBSCHEMA_LISTS if isinstance(schema.get(key), list) for v in schema[key]]
    subs += [schema[key] for key in ("items", "additionalProperties") if isinstance(schema.get(key), Mapping)]
    return own + sum(leaves(sub) for sub in subs if isinstance(sub, Mapping))


MAX_LEAST_DEPTH = 32


@dataclass(frozen=True)
class Least:
    """What a value must hold at least, whichever of the schema's choices a model commits to: a JSON value
    (`value`), and the characters of required string lengths, each of which may cost a token (`chars`)."""

    value: object = None
    chars: int = 0

    def size(self) -> int:
        return len(json.dumps(self.value)) + self.chars


def least(schema: object, root: Mapping[str, Any], depth: int = 0) -> Least:
    """The longest of the shortest values a schema allows over the choices a model may commit to (an `enum`
    option, an `anyOf` branch, a type of a list): a call's required properties, `minItems` items, `minLength`
    characters, local `$ref`s followed to a bounded depth. A `pattern` or a `format` may ask for more."""
    if not isinstance(schema, Mapping) or depth > MAX_LEAST_DEPTH:
        return Least()
    if isinstance(schema.get("$ref"), str):
        return least(resolved(root, schema["$ref"]), root, depth + 1)
    if "const" in schema:
        return Least(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return max((Least(option) for option in schema["enum"]), key=Least.size)
    choices = [schema[key] for key in ("anyOf", "oneOf") if isinstance(schema.get(key), list) and schema[key]]
    kinds = schema.get("type")
    if isinstance(kinds, list) and kinds:
        choices.append([{**schema, "type": kind} for kind in kinds])
    if choices:
        return max((least(option, root, depth + 1) for option in choices[0]), key=Least.size)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        return together([least(part, root, depth + 1) for part in schema["allOf"]])
    return least_of_kind(schema, kinds, root, depth)


def together(parts: list[Least]) -> Least:
    """What the parts of an `allOf` hold at least: their objects' members merged, else the longest part."""
    objects = [(part.value, part.chars) for part in parts if isinstance(part.value, dict)]
    if not objects:
        return max(parts, key=Least.size)
    return Least({k: v for value, _ in objects for k, v in value.items()}, sum(chars for _, chars in objects))


def least_of_kind(schema: Mapping[str, Any], kind: object, root: Mapping[str, Any], depth: int) -> Least:
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema["properties"] if isinstance(schema.get("properties"), Mapping) else {}
        required = [name for name in schema.get("required") or () if isinstance(name, str)]
        members = {name: least(properties.get(name, {}), root, depth + 1) for name in required}
        return Least({n: m.value for n, m in members.items()}, sum(m.chars for m in members.values()))
    if kind == "array":
        prefix: list[object] = schema["prefixItems"] if isinstance(schema.get("prefixItems"), list) else []
        count = min(number(schema.get("minItems")), 256)
        items = [
            least(prefix[i] if i < len(prefix) else schema.get("items", {}), root, depth + 1) for i in range(count)
        ]
        return Least([item.value for item in items], sum(item.chars for item in items))
    if kind == "string":
        return Least("", min(number(schema.get("minLength")), 65_536))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        return Least(low if isinstance(low, int | float) and not isinstance(low, bool) else 0)
    return Least(KIND_LEAST.get(kind) if isinstance(kind, str) else None)


KIND_LEAST: dict[str, object] = {"null": None, "boolean": False, "integer": 0, "number": 0, "string": "", "object": {}}


def least_call(name: str, schema: Mapping[str, Any]) -> Least:
    """What a call to a tool holds at least, as a call is written."""
    arguments = least(schema, schema)
    return Least({"name": name, "arguments": arguments.value}, arguments.chars)


def free_reserve(max_tokens: int) -> int:
    """The closing reserve of a constrained reply that need not be a call: its last tokens, in which closing
    the open JSON soonest is preferred (see decoding.closing_reserve)."""
    return min(32, max_tokens // 4)


def value_chars(schema: Mapping[str, Any], budget: int | None) -> int:
    """The characters each free-form value of a forced call may take so that all of them, and the call's
    syntax, fit in `budget` tokens: the budget less the closing reserve, shared among the values."""
    if not budget:
        return 0
    room = budget - free_reserve(budget)
    return max(16, CHARS_PER_TOKEN * room // (leaves(schema) + 1))


def bounded(schema: Mapping[str, Any], chars: int) -> dict[str, Any]:
    """The schema with a bound on every free-form value that has none: a string's length, a number's
    digits, an array's items; a value of any kind is a bounded scalar. A bound the client set is kept; what
    is generated stays valid for its schema."""
    if anything(schema):  # any value: a bounded scalar (an object or array here could nest past max_tokens)
        scalars = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]
        return {**schema, "anyOf": [bounded(kind, chars) for kind in scalars]}
    out = each_subschema(schema, lambda sub: bounded(sub, chars))
    if "not" in schema:
        out["not"] = schema["not"]  # a bound inside `not` would widen what it allows
    if UNBOUNDED & out.keys():
        return out
    kind = out.get("type")
    if kind == "string" and "maxLength" not in out:
        out["maxLength"] = max(chars, number(out.get("minLength")))
    elif (
        kind in ("integer", "number")
        and not {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} & out.keys()
    ):
        largest = 10 ** max(1, min(MAX_DIGITS, chars // (2 * CHARS_PER_TOKEN))) - 1
        out["minimum"], out["maximum"] = -largest, largest
    elif kind == "array" and "maxItems" not in out:
        out["maxItems"] = max(1, chars // 16, number(out.get("minItems")))
    return out


def number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def args_rule(rule: str, schema_json: str, style: Mapping[str, Any] = JSON_STYLE) -> str:
    schema = json.loads(schema_json)
    return f"{rule}: %json {json.dumps({**schema, 'x-guidance': style})}"


def json_document(schema: Mapping[str, Any]) -> str:
    return f"%json {json.dumps({**schema, 'x-guidance': JSON_STYLE})}"


def json_reply(schema: Mapping[str, Any]) -> str:
    return f"start: {json_document(schema)}\n"


class Grammars:
    """Compiles grammars against one vocabulary and says, in words, which part of a request cannot be compiled.

    With a Compiler, every grammar is first compiled in its process (bounded, timed, a crash there is a
    refusal); only then here. Compiled matchers are kept (the most recently used MATCHERS of them) and each
    request gets a copy, so the decode thread never compiles a grammar it has seen.
    """

    def __init__(self, tokenizer: Any, special_tag: bool, compiler: Compiler | None = None) -> None:
        self.tokenizer, self.special_tag, self.compiler = tokenizer, special_tag, compiler
        self.checked: dict[str, str] = {}
        self.compiled: OrderedDict[str, llguidance.LLMatcher] = OrderedDict()
        self.lock = threading.Lock()

    def problem(self, grammar: str) -> str:
        if grammar not in self.checked:
            if len(self.checked) > 4096:
                self.checked.clear()
            self.checked[grammar] = self.compile_problem(grammar)
        return self.checked[grammar]

    def compile_problem(self, grammar: str) -> str:
        if self.compiler is None:
            return str(llguidance.LLMatcher.validate_grammar(grammar, self.tokenizer))
        try:
            self.compiler.lark(grammar)
        except InvalidRequest as exc:
            return exc.message
        return ""

    def check_tools(self, tools: Sequence[ToolDefinition]) -> None:
        """Each tool's schema compiled alone, so the error names the tool."""
        for index, tool in enumerate(tools):
            schema = json.dumps(tool["function"].get("parameters") or EMPTY_OBJECT, sort_keys=True)
            problem = self.problem(f"start: {args_rule('args', schema).removeprefix('args: ')}\n")
            if problem:
                raise InvalidRequest(
                    f"tool {tool['function']['name']!r}: its parameters cannot constrain generation: {first(problem)}",
                    param=f"tools[{index}].function.parameters",
                )

    def checked_grammar(self, grammar: str, what: str, param: str) -> str:
        problem = self.problem(grammar)
        if problem:
            raise InvalidRequest(f"{what} cannot constrain generation: {first(problem)}", param=param)
        return grammar

    def tool_grammar(self, tools: Sequence[ToolDefinition], parallel: bool, budget: int | None = None) -> ToolGrammar:
        """The calls' grammar, checked tool by tool and whole (every form shares the whole's rules); a forced
        call's values are bounded to end within `budget` tokens."""
        self.check_tools(tools)
        calls = ToolGrammar.of(tools, parallel, self.special_tag, budget)
        self.checked_grammar(calls.lark("required"), "tools", "tools")
        return calls

    def call_tokens(self, tools: Sequence[ToolDefinition]) -> int:
        """About the tokens of the longest of the least calls to each tool (a forced call may be to any of
        them), in a <tool_call> block, the longest form a forced reply takes. The grammar's forced pieces of a
        call split finer than the tokenizer's own reading of the text (by up to about an eighth, measured),
        hence a quarter more; a required string length may cost a token a character."""

        def tokens(text: str) -> int:
            return len(self.tokenizer.tokenize_str(text))

        tags = tokens(f"{OPEN}\n") + tokens(f"\n{CLOSE}")
        calls = (least_call(t["function"]["name"], t["function"].get("parameters") or {}) for t in tools)
        return tags + max(
            (-(-5 * tokens(json.dumps(c.value, ensure_ascii=False)) // 4) + c.chars for c in calls), default=0
        )

    def gbnf(self, grammar: str) -> str:
        """A client's GBNF grammar (llama-server's `grammar` field) as llguidance's Lark, checked."""
        if self.compiler is not None:
            try:
                lark = self.compiler.gbnf(grammar).lark
            except InvalidRequest as exc:
                problem = first(exc.message)
                raise InvalidRequest(f"grammar cannot constrain generation: {problem}", param="grammar") from exc
            self.checked[lark] = ""
            return lark
        try:
            lark = gbnf_to_lark(grammar)
        except Exception as exc:  # the converter raises plain exceptions of several kinds on bad input
            raise InvalidRequest(f"grammar: not a GBNF grammar this server can read: {exc}", param="grammar") from exc
        return self.checked_grammar(lark, "grammar", "grammar")

    def matcher(self, grammar: str) -> llguidance.LLMatcher:
        """A fresh matcher for a grammar, copied from the one compiled for it (compiled now if it is new)."""
        with self.lock:
            pristine = self.compiled.get(grammar)
            if pristine is not None:
                self.compiled.move_to_end(grammar)
                return pristine.deep_copy()
        pristine = llguidance.LLMatcher(self.tokenizer, grammar, log_level=0)
        with self.lock:
            self.compiled[grammar] = pristine
            while len(self.compiled) > MATCHERS:
                self.compiled.popitem(last=False)
            return pristine.deep_copy()


def first(problem: str) -> str:
    return problem.strip().splitlines()[0][:300]
