"""A deterministic offline embedder: hashed bags of word stems, unit length.

Texts that share words get a positive cosine similarity, which is what retrieval's relevance
term needs; it downloads nothing and gives the same vector on every machine.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

STOP_WORDS = frozenset("""
a an the and or but of to in on at for with by from is are was were be been being it its this
that these those as into about his her their he she they them him i you we our your my me do
does did has have had will would can could should not no so up out then than
""".split())
WORD = re.compile(r"[a-z0-9']+")


def stem(word: str) -> str:
    for suffix in ("ing", "ers", "ies", "ed", "es", "er", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def keywords(text: str) -> list[str]:
    return [stem(w) for w in WORD.findall(text.lower()) if w not in STOP_WORDS]


def _bucket(token: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, 1.0 if (value >> 40) & 1 else -1.0


class HashingEmbedder:
    """Feature hashing of stems and stem pairs into `dim` floats."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        stems = keywords(text)
        for token in stems + [f"{a}_{b}" for a, b in zip(stems, stems[1:], strict=False)]:
            index, sign = _bucket(token, self.dim)
            vec[index] += sign
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[_bucket(text or "empty", self.dim)[0]] = 1.0
            return vec
        return vec / norm

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.vector(t) for t in texts])
