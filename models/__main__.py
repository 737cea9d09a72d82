"""python -m models [list | fetch NAME | default]

list     the registry: every model with its file, size, quantisation, license, sha256, and whether it is on disk
fetch    fetch and verify a model's file now (otherwise it is fetched on first use)
default  which model `make serve-qwen` and `make eval` use when nobody names one, and why
"""

from __future__ import annotations

import argparse
import sys

from models.choice import default_model
from models.errors import ModelsError
from models.registry import MODELS, HubFile, ModelSpec, PackagedFile, model_spec
from models.weights import locate, on_disk


def source_text(spec: ModelSpec) -> str:
    source = spec.source
    if isinstance(source, HubFile):
        return f"hub {source.repo_id}@{source.revision[:12]}"
    if isinstance(source, PackagedFile):
        return f"package {source.pip_name}"
    first, last = source.parts[0].requirement, source.parts[-1].requirement
    return f"{len(source.parts)} wheels {first} .. {last}"


def list_models() -> int:
    for spec in MODELS.values():
        here = on_disk(spec)
        print(f"{spec.name}  {spec.parameters}  {spec.quantisation}  {spec.file.size:,} bytes  {spec.license}")
        print(f"    file    {spec.file.filename}  sha256 {spec.file.sha256}")
        print(f"    source  {source_text(spec)}")
        print(f"    on disk {here if here else 'no (fetched on first use)'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m models", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="action")
    commands.add_parser("list", help="the registry and what is on disk")
    fetch = commands.add_parser("fetch", help="fetch and verify a model's file")
    fetch.add_argument("name", choices=list(MODELS))
    commands.add_parser("default", help="the model the main job uses, and why")
    args = parser.parse_args(argv)
    try:
        if args.action == "fetch":
            print(locate(model_spec(args.name)))
            return 0
        if args.action == "default":
            choice = default_model()
            print(f"{choice.spec.name}: {choice.why}")
            return 0
        return list_models()
    except ModelsError as exc:
        print(f"models: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
