"""``python -m benchmarks [name ...]``: run every benchmark, or the ones named.

``python -m benchmarks NAME [options]``: options after one benchmark's name go to it, for a
benchmark whose ``run`` takes them (``python -m benchmarks gpu --device cpu``;
``python -m benchmarks.gpu --help`` lists them)."""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import time

from benchmarks import BENCHMARKS
from benchmarks.common import Skip

# Benchmarks whose module is not named after the benchmark: name -> module.
_MODULES = {
    "splits": "splits_bench",
    "faiss": "faiss_vs_numpy",
    "batch": "batch_bench",
    "games": "games_bench",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "names",
        nargs="*",
        metavar="name",
        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})",
    )
    args, options = parser.parse_known_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    names = args.names or list(BENCHMARKS)
    if options and len(args.names) != 1:
        parser.error(f"options ({' '.join(options)}) go after the name of one benchmark")
    start = time.perf_counter()
    skipped = []
    for name in names:
        module = importlib.import_module(f"benchmarks.{_MODULES.get(name, name)}")
        if options and not inspect.signature(module.run).parameters:
            parser.error(f"{name} takes no options")
        try:
            module.run(options) if options else module.run()
        except Skip as why:
            skipped.append(name)
            print(f"{name}: skipped: {why}")
    print(f"benchmarks done in {time.perf_counter() - start:.0f} s", end="")
    print(f" ({len(skipped)} skipped: {', '.join(skipped)})" if skipped else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
