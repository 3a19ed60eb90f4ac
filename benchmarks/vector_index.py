"""Is a vector index worth it for retrieval at 100k memories? Measured, not adopted.

For one resident with `--count` memories (clustered around topics like sentence embeddings,
a week of access times, the paper's importance spread), this prints per query: our exact
retrieval (`townbot.mind.retrieval.retrieve`, one float32 product over every memory), and the
nearest neighbours by cosine from a graph index (hnswlib HNSW, faiss
HNSW) and faiss's flat scan, each followed by the paper's scoring of the `--fetch` memories it
returned. It also prints how often that top 10 is exactly retrieval's top 10, how long the
index took to build (a memory arrives at a time in a town) and what it holds in memory.

An index finds memories near the query, but the paper's score also counts recency and
importance, and normalises relevance by its minimum and maximum over all memories: a recent,
important memory far from the query can rank first and an index never offers it. Hence the
agreement column.

Not a project dependency: `pip install hnswlib faiss-cpu` to run it; missing ones are skipped.
Usage: python benchmarks/vector_index.py [--count N] [--dims 256,1536] [--queries Q] [--fetch M]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import numpy as np
from threadpoolctl import threadpool_limits

from townbot.mind.memory import KINDS, MemoryStream
from townbot.mind.retrieval import normalised, retrieve, score_stream

NOW = datetime(2023, 2, 20, 18, 0)
LIMIT = 10


def town_like(dim: int, count: int, seed: int = 0) -> tuple[MemoryStream, np.ndarray]:
    """A stream of `count` memories around 200 topics, and the topic centres."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((200, dim)).astype(np.float32)
    vectors = topics[rng.integers(0, 200, count)] + 0.6 * rng.standard_normal((count, dim),
                                                                              dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    minutes = np.sort(rng.integers(0, 7 * 24 * 60, count))[::-1]
    importance = rng.choice(10, size=count, p=[.3, .2, .15, .1, .08, .06, .05, .03, .02, .01]) + 1
    stream = MemoryStream(dim)
    for index in range(count):
        stream.add(KINDS[index % len(KINDS)], f"memory {index}",
                   NOW - timedelta(minutes=int(minutes[index])), int(importance[index]),
                   vectors[index])
    stream.take_changes()
    return stream, topics


def rescored(stream: MemoryStream, query: np.ndarray, ids: np.ndarray) -> list[int]:
    """The paper's top 10 among `ids` only: recency and importance normalised over the whole
    stream (cheap without an index), relevance over the fetched memories (an index knows the
    highest cosine but not the lowest)."""
    ids = np.sort(ids[ids >= 0])
    _, recency, importance, _ = score_stream(stream, query, NOW)
    relevance = normalised(stream.arrays()[0][ids] @ query)
    total = recency[ids] + importance[ids] + relevance
    return [int(ids[position]) for position in np.argsort(-total, kind="stable")[:LIMIT]]


def timed(run: Callable[[np.ndarray], object], probes: np.ndarray) -> tuple[float, float]:
    """Median and p90 CPU milliseconds of `run` over the probes (CPU: the machine is shared)."""
    times = []
    for probe in probes:
        began = time.thread_time()
        run(probe)
        times.append((time.thread_time() - began) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--dims", default="256,1536")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--fetch", type=int, default=200, help="memories taken from an index")
    args = parser.parse_args()
    threadpool_limits(limits=1, user_api="blas")
    print("| dims | method | build s (CPU) | memory MB | query ms CPU median/p90 | top 10 exact |")
    print("|---|---|---|---|---|---|")
    for dim in (int(part) for part in args.dims.split(",")):
        stream, topics = town_like(dim, args.count)
        rng = np.random.default_rng(1)
        probes = (topics[rng.integers(0, 200, args.queries)]
                  + 0.3 * rng.standard_normal((args.queries, dim))).astype(np.float32)
        probes /= np.linalg.norm(probes, axis=1, keepdims=True)
        vectors = stream.arrays()[0]
        exact = [[s.memory.id for s in retrieve(stream, probe, NOW, limit=LIMIT, touch=False)]
                 for probe in probes]
        median, p90 = timed(lambda p, s=stream: retrieve(s, p, NOW, limit=LIMIT, touch=False), probes)
        print(f"| {dim} | exact retrieval (ours) | 0 | {vectors.nbytes / 1e6:.0f} | "
              f"{median:.2f}/{p90:.2f} | 100% |")
        for name, build in indexes(dim).items():
            began = time.thread_time()
            search, size = build(vectors)
            built = time.thread_time() - began
            agree = sum(rescored(stream, probe, search(probe, args.fetch)) == want
                        for probe, want in zip(probes, exact, strict=True))
            median, p90 = timed(lambda p, find=search: find(p, args.fetch), probes)
            print(f"| {dim} | {name}, best {args.fetch} by cosine, rescored | {built:.1f} | "
                  f"{size / 1e6:.0f} | {median:.2f}/{p90:.2f} (+ rescoring) | "
                  f"{100 * agree / len(probes):.0f}% |")
    return 0


Builder = Callable[[np.ndarray], tuple[Callable[[np.ndarray, int], np.ndarray], int]]


def indexes(dim: int) -> dict[str, Builder]:
    found: dict[str, Builder] = {}
    if importlib.util.find_spec("hnswlib"):
        found["hnswlib HNSW (M 16, ef 200)"] = lambda vectors: hnsw(vectors, dim)
    if importlib.util.find_spec("faiss"):
        found["faiss HNSW flat (M 16, ef 200)"] = lambda vectors: faiss_index(vectors, dim, True)
        found["faiss flat scan"] = lambda vectors: faiss_index(vectors, dim, False)
    return found


def hnsw(vectors: np.ndarray, dim: int):  # type: ignore[no-untyped-def]
    import hnswlib

    index = hnswlib.Index(space="ip", dim=dim)
    index.init_index(max_elements=len(vectors), M=16, ef_construction=100)
    index.set_num_threads(1)
    for first in range(0, len(vectors), 1000):  # memories arrive over time
        batch = vectors[first: first + 1000]
        index.add_items(batch, np.arange(first, first + len(batch)))
    index.set_ef(200)

    def search(query: np.ndarray, fetch: int) -> np.ndarray:
        return index.knn_query(query, k=fetch)[0][0].astype(np.int64)

    return search, len(vectors) * (dim * 4 + 16 * 2 * 4 + 8)


def faiss_index(vectors: np.ndarray, dim: int, graph: bool):  # type: ignore[no-untyped-def]
    import faiss

    faiss.omp_set_num_threads(1)
    index = (faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT) if graph
             else faiss.IndexFlatIP(dim))
    if graph:
        index.hnsw.efConstruction = 100
        index.hnsw.efSearch = 200
    for first in range(0, len(vectors), 1000):
        index.add(vectors[first: first + 1000])

    def search(query: np.ndarray, fetch: int) -> np.ndarray:
        return index.search(query[None, :], fetch)[1][0].astype(np.int64)

    size = len(vectors) * dim * 4 + (len(vectors) * 16 * 2 * 4 if graph else 0)
    return search, size


if __name__ == "__main__":
    raise SystemExit(main())
