"""Ground truth about code: which files define a name and which files use it, from tree-sitter's parse of
each file (the grammars of `tree-sitter-language-pack`), by one query per language.

A definition is the name a declaration introduces (a function, a method, a class, a struct, a type, a
trait); a use is the same name written anywhere else as an identifier (a call, a type, a field). Text in
comments and strings is neither. Languages without a query here have no symbols.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import tree_sitter as ts
from tree_sitter_language_pack import get_language, get_parser

EXTENSIONS = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust",
}  # fmt: skip
JS_DEFINITIONS = """
(function_declaration name: (identifier) @def)
(generator_function_declaration name: (identifier) @def)
(method_definition name: (property_identifier) @def)
(variable_declarator name: (identifier) @def value: [(arrow_function) (function_expression)])
"""
QUERIES = {
    "python": ("(function_definition name: (identifier) @def) (class_definition name: (identifier) @def)",
               "(identifier) @ref"),
    "javascript": (JS_DEFINITIONS + "(class_declaration name: (identifier) @def)",
                   "(identifier) @ref (property_identifier) @ref"),
    "typescript": (JS_DEFINITIONS + """(class_declaration name: (type_identifier) @def)
(abstract_class_declaration name: (type_identifier) @def)
(interface_declaration name: (type_identifier) @def)
(type_alias_declaration name: (type_identifier) @def)
(enum_declaration name: (identifier) @def)""", "(identifier) @ref (property_identifier) @ref (type_identifier) @ref"),
    "go": ("""(function_declaration name: (identifier) @def)
(method_declaration name: (field_identifier) @def)
(type_spec name: (type_identifier) @def)""", "(identifier) @ref (type_identifier) @ref (field_identifier) @ref"),
    "rust": ("""(function_item name: (identifier) @def)
(function_signature_item name: (identifier) @def)
(struct_item name: (type_identifier) @def)
(enum_item name: (type_identifier) @def)
(trait_item name: (type_identifier) @def)
(type_item name: (type_identifier) @def)
(union_item name: (type_identifier) @def)
(macro_definition name: (identifier) @def)""", "(identifier) @ref (type_identifier) @ref (field_identifier) @ref"),
}  # fmt: skip
QUERIES["tsx"] = QUERIES["typescript"]


@dataclass
class Symbols:
    """Per file: the names it defines (with the line each is defined on, from 1) and the names it uses."""

    defined: dict[str, dict[str, int]] = field(default_factory=dict)
    used: dict[str, set[str]] = field(default_factory=dict)

    def definers(self, name: str) -> set[str]:
        return {path for path, names in self.defined.items() if name in names}

    def users(self, name: str) -> set[str]:
        """The files that use the name, other than where it is defined."""
        return {path for path, names in self.used.items() if name in names} - self.definers(name)


def language_of(path: str) -> str | None:
    dot = path.rfind(".")
    return EXTENSIONS.get(path[dot:].lower()) if dot > path.rfind("/") else None


@functools.cache
def queries(language: str) -> tuple[ts.Parser, ts.Query, ts.Query]:
    definitions, references = QUERIES[language]
    grammar = get_language(language)  # type: ignore[arg-type]
    return get_parser(language), ts.Query(grammar, definitions), ts.Query(grammar, references)  # type: ignore[arg-type]


def symbols_of(files: Mapping[str, str]) -> Symbols:
    """The definitions and uses of every file of a language with a query."""
    found = Symbols()
    for path, text in files.items():
        language = language_of(path)
        if language is None:
            continue
        parser, definitions, references = queries(language)
        root = parser.parse(text.encode("utf-8")).root_node
        defs = ts.QueryCursor(definitions).captures(root).get("def", [])
        at = {(n.start_byte, n.end_byte) for n in defs}
        found.defined[path] = {}
        for node in defs:
            found.defined[path].setdefault(node_text(node), node.start_point[0] + 1)
        refs = ts.QueryCursor(references).captures(root).get("ref", [])
        found.used[path] = {node_text(n) for n in refs if (n.start_byte, n.end_byte) not in at}
    return found


def node_text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")
