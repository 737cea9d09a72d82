"""Symbols from tree-sitter: the names a file defines (functions, methods, classes, structs, types, traits),
with their line and kind, and the names it uses, for every language `tree-sitter-language-pack` parses.

One rule over every grammar rather than a query per language: a node whose type is a definition or a
declaration (`function_definition`, `class_declaration`, `function_item`, `type_spec`, `method`) names what
it defines in its `name` field (C and C++ in their declarator); a use is any identifier that is not such a
name. Comments and strings hold no identifiers, so a name a comment mentions is not a use.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import tree_sitter as ts

EXTENSIONS = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
    "jsx": "javascript", "ts": "typescript", "mts": "typescript", "cts": "typescript", "tsx": "tsx", "go": "go",
    "rs": "rust", "java": "java", "kt": "kotlin", "kts": "kotlin", "scala": "scala", "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "cs": "csharp", "rb": "ruby", "php": "php",
    "swift": "swift", "lua": "lua", "sh": "bash", "bash": "bash", "ex": "elixir", "exs": "elixir", "erl": "erlang",
    "hs": "haskell", "ml": "ocaml", "r": "r", "jl": "julia", "dart": "dart", "zig": "zig", "pl": "perl",
}  # fmt: skip
DEFINING = ("_definition", "_declaration", "_item", "_spec", "_declarator_definition")
ALSO_DEFINING = frozenset(("method", "class", "module", "singleton_method", "function", "function_signature_item"))
NOT_DEFINING = frozenset((
    "variable_declaration", "lexical_declaration", "import_declaration", "field_declaration", "parameter_declaration",
    "use_declaration", "short_var_declaration", "package_clause", "export_statement", "import_spec", "var_spec",
    "const_spec", "let_declaration", "local_variable_declaration", "expression_statement", "namespace_use_declaration",
))  # fmt: skip
FUNCTION_VALUES = frozenset(("arrow_function", "function_expression", "function", "generator_function"))
SPECIFIERS = frozenset(("struct_specifier", "class_specifier", "enum_specifier", "union_specifier"))
MAX_DEPTH = 400  # deeper trees (generated code) are not walked further


@dataclass(frozen=True)
class Definition:
    name: str
    line: int  # from 1
    kind: str  # `function`, `class`, `method`, `struct`, ... (the node's type, its ending cut)


@dataclass(frozen=True)
class FileSymbols:
    definitions: tuple[Definition, ...]
    uses: dict[str, list[int]]  # name -> the lines it is used on (first few), from 1


def language_for(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    return EXTENSIONS.get(name.rsplit(".", 1)[-1].lower()) if "." in name else None


@functools.cache
def parser_for(language: str) -> ts.Parser | None:
    from tree_sitter_language_pack import get_parser  # loaded on first use: its grammars are large

    try:
        return get_parser(language)  # type: ignore[arg-type]
    except (LookupError, ValueError):
        return None


def symbols_of(path: str, data: bytes, most_uses: int = 8) -> FileSymbols | None:
    """The file's definitions and uses, or None when no grammar parses its language."""
    language = language_for(path)
    parser = parser_for(language) if language else None
    if parser is None:
        return None
    root = parser.parse(data).root_node
    definitions: list[Definition] = []
    names: set[tuple[int, int]] = set()
    uses: dict[str, list[int]] = {}
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        kind = node.type
        if is_definition(node):
            name = defined_name(node)
            if name is not None:
                definitions.append(Definition(text(name), name.start_point[0] + 1, short_kind(kind)))
                names.add((name.start_byte, name.end_byte))
        elif kind.endswith("identifier") and (node.start_byte, node.end_byte) not in names:
            lines = uses.setdefault(text(node), [])
            if len(lines) < most_uses and (line := node.start_point[0] + 1) not in lines:
                lines.append(line)
        stack.extend((child, depth + 1) for child in reversed(node.children))
    definitions.sort(key=lambda d: d.line)
    return FileSymbols(tuple(definitions), uses)


def is_definition(node: ts.Node) -> bool:
    kind = node.type
    if kind in NOT_DEFINING:
        return False
    if kind == "variable_declarator":  # `const parse = (s) => ...`: a function by another name
        value = node.child_by_field_name("value")
        return value is not None and value.type in FUNCTION_VALUES
    if kind.endswith("_specifier"):  # C and C++: `struct point { ... }` defines it, `struct point p` uses it
        return kind in SPECIFIERS and node.child_by_field_name("body") is not None
    return kind.endswith(DEFINING) or kind in ALSO_DEFINING


def defined_name(node: ts.Node) -> ts.Node | None:
    """The identifier a definition names: its `name` field, or (C, C++) the innermost name of its declarator."""
    name = node.child_by_field_name("name")
    if name is not None:
        return name if name.type.endswith(("identifier", "constant")) or name.child_count == 0 else None
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and not declarator.type.endswith("identifier"):
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def short_kind(kind: str) -> str:
    for ending in ("_definition", "_declaration", "_item", "_spec", "_specifier"):
        kind = kind.removesuffix(ending)
    return {"function_signature": "function", "variable_declarator": "function", "type_alias": "type"}.get(kind, kind)


def text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
