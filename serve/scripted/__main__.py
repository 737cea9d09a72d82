"""python -m serve.scripted [--host 127.0.0.1] [--port 8001] [--latency-ms N] [--max-body-mb N] [--quiet]"""

from __future__ import annotations

import argparse

from serve.core.app import BodyLimits
from serve.core.run import run_server
from serve.scripted.app import create_app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m serve.scripted", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--latency-ms", type=int, default=0, help="wait this long before every reply")
    parser.add_argument("--max-body-mb", type=float, default=4.0, help="largest request body accepted (default 4)")
    parser.add_argument("--quiet", action="store_true", help="no access log")
    args = parser.parse_args(argv)
    app = create_app(latency_ms=args.latency_ms, limits=BodyLimits(int(args.max_body_mb * 1_000_000)))
    run_server(app, args.host, args.port, quiet=args.quiet)


if __name__ == "__main__":
    main()
