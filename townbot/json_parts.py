"""Pieces of JSON written without json.dumps: its set-up is most of its cost for one short
text, and a tick's commit writes a few thousand (plans, mind parts, bodies)."""

from __future__ import annotations

import json
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import Any

# `json.dumps` of a text, kept: the same texts recur tick after tick (what residents see, their
# actions and places), and finding one kept costs under half of encoding it again (a text of
# 48 characters: about 1.0k instructions against 2.4k). Only for a text (a TypeError otherwise).
text_json = lru_cache(maxsize=8192)(encode_basestring_ascii)


def json_text(value: Any) -> str:
    """`json.dumps(value)`: a text's kept JSON (text_json), "null" for None, and json.dumps
    for anything else."""
    if type(value) is str:
        return text_json(value)
    return "null" if value is None else json.dumps(value)
