"""The command line the demo-lake benchmarks share: ``--scale``, ``--seed`` and ``--keep``."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path


def lake_main(run: Callable[[float, int, Path], None], description: str, prefix: str,
              argv: list[str] | None = None) -> int:
    """Parse the options and call ``run(scale, seed, folder)`` with a folder for the lake: the
    one ``--keep`` names (kept afterwards), else a temporary one."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.scale, args.seed, args.keep.resolve())
        return 0
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        run(args.scale, args.seed, Path(folder))
    return 0
