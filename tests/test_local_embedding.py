"""The local semantic embedder: BERT's tokenization, and retrieval by meaning on the labelled
set that benchmarks/embedders.py measures (questions sharing no words with their memory)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from townbot.llm.embedding import HashingEmbedder
from townbot.llm.local_embedding import MiniLMEmbedder, basic_tokens, token_ids, vocabulary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from embedders import SET, mean_reciprocal_rank  # noqa: E402


def test_words_are_split_and_pieced_as_bert_does():
    assert basic_tokens("Isabella's café opens at 8:00!") == [
        "isabella", "'", "s", "cafe", "opens", "at", "8", ":", "00", "!"]
    vocab = vocabulary()
    ids = token_ids("gentrification")
    assert ids[0] == vocab["[CLS]"] and ids[-1] == vocab["[SEP]"]
    pieces = [next(t for t, i in vocab.items() if i == n) for n in ids[1:-1]]
    assert "".join(p.removeprefix("##") for p in pieces) == "gentrification" and len(pieces) > 1


def test_vectors_are_unit_length_and_follow_meaning():
    vectors = MiniLMEmbedder().embed(["Isabella is planning a party at the cafe",
                                      "Who is hosting a celebration?", "The sink is leaking"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_meaning_beats_word_overlap_on_the_labelled_set():
    data = json.loads(SET.read_text(encoding="utf-8"))
    local, _ = mean_reciprocal_rank(MiniLMEmbedder(), data["memories"], data["queries"])
    hashing, _ = mean_reciprocal_rank(HashingEmbedder(), data["memories"], data["queries"])
    assert local > 0.8 and hashing < 0.4, (local, hashing)
