"""Pieces of JSON written without json.dumps: its set-up is most of its cost for one short
text, and a tick's commit writes a few thousand (plans, mind parts, bodies)."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any


def json_text(value: Any) -> str:
    """`json.dumps(value)`: the encoder's own C function for a text, "null" for None, and
    json.dumps for anything else."""
    if type(value) is str:
        return encode_basestring_ascii(value)
    return "null" if value is None else json.dumps(value)
