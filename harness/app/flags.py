"""The controls flag, shared by `harness run` and `python -m evals`."""

from __future__ import annotations

import argparse

from harness.controls import PROFILES, named
from harness.core.config import AUTO, Profile


def add_controls(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--controls",
        choices=["auto", *PROFILES],
        default="auto",
        help="the controls profile: small (for models under a few billion parameters), tiny (small, for models "
        "under a billion), none (the plain loop), or auto (the default: tiny or small when the server reports such "
        "a model, else none); the run records which ran",
    )


def profile_from(args: argparse.Namespace) -> Profile:
    return AUTO if args.controls == "auto" else named(args.controls)
