#!/usr/bin/env bash
# The slim client's install, measured the way bench/RESULTS.md reports it: build the
# yard-client wheel (client/build-wheel), make a fresh venv with pip as an author would
# (python3 -m venv), time `pip install WHEEL` (websockets comes from pip's package index),
# and count what it adds to site-packages (a bare venv's site-packages subtracted).
# Usage: bench/slim_client.sh [--max-s S] [--max-mb MB]   (exit 1 above either)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
max_s="" max_mb=""
while (($#)); do
    case "$1" in
        --max-s) max_s="$2"; shift 2 ;;
        --max-mb) max_mb="$2"; shift 2 ;;
        *) echo "usage: $0 [--max-s S] [--max-mb MB]" >&2; exit 2 ;;
    esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
wheel="$("$root/client/build-wheel" "$work/dist" | tail -1)"
python3 -m venv "$work/bare"
python3 -m venv "$work/slim"
export PIP_DISABLE_PIP_VERSION_CHECK=1
start=$(date +%s.%N)
"$work/slim/bin/pip" install -q "$wheel"
end=$(date +%s.%N)
site() { echo "$1"/lib/python3*/site-packages; }
kb_slim=$(du -sk "$(site "$work/slim")" | cut -f1)
kb_bare=$(du -sk "$(site "$work/bare")" | cut -f1)
python3 - "$start" "$end" "$kb_slim" "$kb_bare" "$wheel" "$work/slim/bin/python" \
    "$max_s" "$max_mb" <<'PY'
import json, os, subprocess, sys
start, end, kb_slim, kb_bare, wheel, python, max_s, max_mb = sys.argv[1:]
seconds = float(end) - float(start)
mb = (int(kb_slim) - int(kb_bare)) / 1024
names = json.loads(subprocess.check_output([python, "-c", (
    "import importlib.metadata as m, json; print(json.dumps(sorted(f\"{d.metadata['Name']} "
    "{d.version}\" for d in m.distributions())))")], cwd="/"))  # not the checkout's egg-info
dists = ", ".join(n for n in names if n.split()[0] not in ("pip", "setuptools"))
print(f"yard-client: wheel {os.path.getsize(wheel) // 1024} kB; pip install into a fresh "
      f"venv {seconds:.1f} s, +{mb:.1f} MB in site-packages ({dists})")
fail = [f"slower than {max_s} s"] * (bool(max_s) and seconds > float(max_s))
fail += [f"bigger than {max_mb} MB"] * (bool(max_mb) and mb > float(max_mb))
for line in fail:
    print(line, file=sys.stderr)
sys.exit(1 if fail else 0)
PY
