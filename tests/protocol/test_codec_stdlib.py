"""The codec without orjson (the slim client ``yard-client`` installs only websockets):
the standard library writes and reads the same JSON values, and nothing imports orjson."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from protocol import Message, codec, decode
from tests import SCALE
from tests.protocol.test_protocol import SAMPLES


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda m: m.TYPE)
def test_the_standard_library_encodes_the_same_json_values(msg: Message) -> None:
    assert codec.HAVE_ORJSON  # the full install: both paths can be compared here
    text = codec._encode_json(msg)
    assert json.loads(text) == json.loads(codec._encode_orjson(msg))
    assert decode(text) == msg
    assert codec._loads_json(text) == json.loads(text)


def test_without_orjson_a_bot_client_reads_and_writes_frames() -> None:
    """In a process where orjson cannot be imported: the codec and the bot client load,
    encode, read a ``your_turn`` by the fast path and refuse bad JSON as before."""
    script = """
import sys
sys.modules["orjson"] = None  # import orjson raises ImportError
from protocol import MoveMsg, YourTurn, Clock, codec, decode, encode, encode_bytes
from bots.client import read_frame
assert not codec.HAVE_ORJSON
frame = encode(YourTurn("g1", 2, "d1", {"seat": "d1"}, ["taxi:4"], Clock(1.5, 0.0)))
assert isinstance(read_frame(frame), YourTurn)
assert decode(encode_bytes(MoveMsg("g1", 4, "taxi:4", "mrx"))).move == "taxi:4"
try:
    decode('{"type": "ping", "nonce": NaN}')
except Exception as exc:
    print(type(exc).__name__, exc.code.value)
print(sorted(m for m, mod in sys.modules.items() if mod is not None
            and m.split(".")[0] in ("orjson", "numpy")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60 * SCALE, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["ProtocolError bad_json", "[]"]
