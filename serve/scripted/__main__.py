"""python -m serve.scripted [--host 127.0.0.1] [--port 8001] [--latency-ms N]"""

from __future__ import annotations

import argparse

from serve.http import run_server
from serve.scripted.app import create_app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m serve.scripted", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--latency-ms", type=int, default=0, help="wait this long before every reply")
    args = parser.parse_args(argv)
    run_server(create_app(latency_ms=args.latency_ms), args.host, args.port)


if __name__ == "__main__":
    main()
