"""JSON schemas at the edges a server must take or refuse: chains of references, deep nesting, schemas
whose checking costs milliseconds."""

from __future__ import annotations

from typing import Any


def ref_chain(links: int, shape: str) -> dict[str, Any]:
    def link(i: int) -> dict[str, Any]:
        ref = {"$ref": f"#/$defs/d{i + 1}"}
        if shape == "object":
            return {"type": "object", "properties": {"a": ref}, "required": ["a"]}
        if shape == "array":
            return {"type": "array", "items": ref, "minItems": 1}
        return ref if shape == "ref" else {"anyOf": [{"type": "integer"}, ref]}

    defs = {f"d{i}": link(i) for i in range(links)} | {f"d{links}": {"type": "string"}}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "required": ["x"], "$defs": defs}


def nested_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def heavy_schema(seed: int, properties: int = 120) -> dict[str, Any]:
    """A distinct schema whose checking costs milliseconds: many properties, each a choice of constrained kinds."""
    kinds = [{"type": "string", "pattern": f"^a{seed}+$", "minLength": 1}, {"type": "integer", "minimum": seed}]
    return {"type": "object", "properties": {f"p{seed}_{i}": {"anyOf": kinds} for i in range(properties)}}
