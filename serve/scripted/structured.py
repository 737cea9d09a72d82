"""`structured`: a JSON reply that fits the request's response_format, for clients' structured-output paths.

The document is the simplest instance of the schema (first enum value, minimums, required properties
filled, strings from the question); it is validated against the schema before it is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from serve.errors import ScriptExhausted
from serve.scripted.script import Reply, Transcript, text

MAX_DEPTH = 16


def resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return schema
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if part:
            node = node.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(node, dict) else {}
    return node if isinstance(node, Mapping) else {}


def instance(schema: Mapping[str, Any], root: Mapping[str, Any], words: str, depth: int = 0) -> Any:
    """The simplest document that fits `schema` (None where nothing simple fits)."""
    schema = resolve(schema, root)
    if depth > MAX_DEPTH:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return instance(schema[key][0], root, words, depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: instance(sub, root, words, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        item = schema.get("items", {})
        return [instance(item, root, words, depth + 1) for _ in range(int(schema.get("minItems", 0)))]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        return int(low) if kind == "integer" else float(low)
    simple: dict[str, Any] = {"boolean": True, "null": None}
    return simple.get(kind, words[: int(schema.get("maxLength", 80))])


def structured(t: Transcript) -> Reply:
    form = t.response_format
    if form is None or form.type == "text":
        return text("Ask with response_format json_object or json_schema and I answer with JSON.")
    if form.type == "json_object":
        return text(json.dumps({"answer": t.question}))
    schema = (form.json_schema or {}).get("schema", {})
    document = instance(schema, schema, t.question)
    try:
        valid = not list(Draft202012Validator(schema).iter_errors(document))
    except (SchemaError, RecursionError):
        valid = False
    if not valid:
        raise ScriptExhausted(
            "the structured scenario cannot build a document for this schema", param="response_format"
        )
    return text(json.dumps(document))
