"""python -m evals compare A.json B.json [--out FILE]: per-task differences between two saved results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evals.manifest import results_header
from evals.scores import compared


def load(path: str | Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read a summary.json ({exc})") from exc
    if "results" not in data:
        raise ValueError(f"{path}: not an eval summary (no 'results')")
    return data


def index(data: dict[str, Any]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in data["results"]:
        rows.setdefault((r["provider"], r["task"]), []).append(r)
    return rows


def cell(rows: list[dict[str, Any]] | None) -> str:
    if not rows:
        return "(absent)"
    right = sum(r["correct"] for r in rows)
    turns = sum(r["turns"] for r in rows) / len(rows)
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows) / len(rows)
    wall = sum(r["wall_ms"] for r in rows) / len(rows)
    return f"{right}/{len(rows)} right, {turns:.1f} turns, {tokens:,.0f} tok, {wall:,.0f}ms"


def compare(a_path: str | Path, b_path: str | Path) -> str:
    first, second = load(a_path), load(b_path)
    if "scores" in first and "scores" in second:  # two runs of a split: their scores, with intervals
        head = [f"A = {a_path} (seed {first.get('seed')})", f"B = {b_path} (seed {second.get('seed')})", ""]
        return "\n".join([*head, *compared(first["scores"], second["scores"])])
    a, b = index(first), index(second)
    keys = list(dict.fromkeys([*a, *b]))
    changed = [k for k in keys if cell(a.get(k)).split(",")[0] != cell(b.get(k)).split(",")[0]]
    lines = [f"A = {a_path}", f"B = {b_path}", f"{len(changed)} of {len(keys)} task outcomes differ", ""]
    for key in sorted(keys, key=lambda k: k not in changed):
        flag = "*" if key in changed else " "
        lines.append(f"{flag} {key[0]:<10} {key[1]:<12} A: {cell(a.get(key)):<48} B: {cell(b.get(key))}")
    return "\n".join(lines)


def write(a_path: str | Path, b_path: str | Path, out: Path, command: str) -> Path:
    """The comparison as a results file, opened by the command, revision and CPU that wrote it."""
    body = compare(a_path, b_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# {a_path} beside {b_path}\n\n{results_header(command)}\n\n{body}\n", encoding="utf-8")
    return out
