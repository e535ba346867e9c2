"""Engine benchmark script: the same code as ``yard bench engine``.

    .venv/bin/python bench/engine.py --rules classic --seconds 10
"""

from __future__ import annotations

import sys

from yard.cli import main

if __name__ == "__main__":
    main(["bench", "engine", *sys.argv[1:]])
