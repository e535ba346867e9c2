"""The benchmarks: scripts run as ``python bench/NAME.py`` (README, bench/RESULTS.md), each
printing what it measured. A package so that ``lint-imports`` checks their imports (the top
layer: they may import anything, nothing imports them); a script that imports another
imports it as ``bench.NAME``, after putting its checkout, not bench/, on the import path
(bench/records.py, server.py and tournament.py are named like packages). ``ws_echo/`` is a
verbatim copy of the echo yardstick, not part of the package.
"""
