"""GradStep: step through PyTorch lessons and watch autograd work.

``python main.py`` opens the app; ``python main.py FILE`` opens FILE in it;
``python main.py --trace FILE`` prints the headless JSON trace of FILE.
"""

from __future__ import annotations

import argparse
import os
import sys


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gradstep", description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="a lesson or any .py file to open")
    parser.add_argument("--trace", action="store_true",
                        help="run FILE without a window and print one JSON record per pause")
    parser.add_argument("--break", dest="breaks", type=int, action="append", metavar="LINE",
                        help="with --trace: record only the pauses at these lines")
    parser.add_argument("--max-steps", type=int, metavar="N", help="with --trace: stop after N records")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="with --trace: stop after this wall time")
    parser.add_argument("--graph", action="store_true", help="with --trace: add the autograd graph to each record")
    parser.add_argument("--ops", action="store_true",
                        help="with --trace: add the PyTorch operations of the line that just ran to each record")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gradstep`` command and of ``python main.py``."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.trace:
        if not args.file:
            print("gradstep: --trace needs a FILE", file=sys.stderr)
            return 2
        from app.trace import write_trace

        sys.stdout.reconfigure(encoding="utf-8")
        try:
            return write_trace(args.file, sys.stdout, args.breaks, args.max_steps, args.timeout, args.graph,
                               args.ops)
        except BrokenPipeError:
            # The reader left (``--trace FILE | head``): end quietly, as a Unix filter does, with
            # stdout on /dev/null so that the interpreter's final flush cannot fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
    from widgets.app import run_app

    return run_app(args.file)


if __name__ == "__main__":
    sys.exit(main())
