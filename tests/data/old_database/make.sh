#!/usr/bin/env bash
# Regenerates yard.sqlite and the expected outputs with the yard of commit e5264b0 (before
# the database stored self-contained records). Usage: make.sh /path/to/e5264b0-checkout
# Game ids and times are random: every file here is regenerated together.
set -euo pipefail
base=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
yard="$here/../../../.venv/bin/yard"
python="$here/../../../.venv/bin/python"
work=$(mktemp -d)
db="sqlite:///$work/yard.db"
cd "$base"
export PYTHONPATH="$base"
"$yard" tournament run --rules grid5 --bots random,greedy --pairs 3 --concurrency 1 \
    --seed 11 --move-time 5 --db "$db" > /dev/null
"$yard" match --rules classic --mrx random --detectives random --seed 5 --db "$db" > /dev/null
"$yard" match --rules grid5 --mrx alphabeta:time=0.05 --detectives greedy --seed 8 \
    --db "$db" > /dev/null
"$yard" tournament run --rules grid5 --bots greedy,random --pairs 12 --concurrency 1 \
    --sprt elo0=0,elo1=600,alpha=0.2,beta=0.2 --seed 3 --db "$db" > /dev/null
# interrupted while its only game waits for a bot that never connects: 0 of 2 played
timeout 20 "$yard" tournament run --rules grid5 --bots random,dead --engine name=dead \
    'cmd=sleep 100' --pairs 1 --concurrency 1 --connect-timeout 1 --seed 4 --db "$db" \
    > /dev/null 2>&1 || true
# a bot that exits at once: the run stops with 2 entries scheduled
"$yard" tournament run --rules grid5 --bots random,dead --engine name=dead cmd=false \
    --pairs 1 --concurrency 1 --connect-timeout 1 --seed 4 --db "$db" > /dev/null 2>&1 || true
"$python" "$here/old_records.py" "$db"   # a forfeit, an aborted game, a format 1 record
rm -f "$here/yard.sqlite"
"$python" - "$work/yard.db" "$here/yard.sqlite" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("PRAGMA journal_mode = DELETE")
con.execute(f"VACUUM INTO '{sys.argv[2]}'")
con.close()
PY
"$python" "$here/record.py" "$yard" "$here"
rm -rf "$work"
