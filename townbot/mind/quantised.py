"""An int8 copy of a stream's embeddings: a first pass that bounds every cosine for a quarter of
the bytes, so that retrieval at high dimensions reads 15 MB instead of 61 MB per query over 10k
memories of 1536 dimensions, and scores exactly only the few memories the bounds cannot settle.

Each memory v is stored as codes a = round(v / s) with s = max|v| / 127, and the query q as
b = round(q / t) with t = max|q| / 63. Then |v.q - s t (a.b)| <= s/2 ||q||_1 + t/2 s ||a||_1
(each code is off by at most half a step), plus float32 rounding of an exact product. The
product a.b is integer arithmetic in onnxruntime (already a dependency for the local embedder),
whose u8 x s8 kernel is the fast one: b goes in as b + 64 and 64 * sum(a) comes off. The query
has 7 bits, not 8: without VNNI (AVX2 only) that kernel adds pairs of u8 x s8 products in
16 bits with saturation, which 255 * 127 * 2 overflows and 127 * 127 * 2 does not (a byte
query made wrong estimates outside their bounds on such a machine). (A 16-bit query as two byte
rows halves the bound but doubles the kernel's time: measured.)
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

MIN_DIM = 512  # below this the float32 product is already a few hundred microseconds at 10k
MIN_ROWS = 4096  # and so it is for fewer memories at any dimension
CHUNK = 1024  # memories per block of the int8 copy, stored dimension-major as the kernel wants
# The query's codes: -63..63, shifted to 1..127 (unsigned) so no 16-bit pair sum saturates.
QUERY_LEVELS = 63
QUERY_SHIFT = 64
FLOAT32_SLACK = 2.0 ** -22  # twice float32's unit roundoff, per dimension, on |v| |q|


def worth_keeping(dim: int) -> bool:
    """Whether a stream of this dimension keeps an int8 copy (it costs a quarter more memory)."""
    return dim >= MIN_DIM


class Int8Copy:
    """The int8 codes of a stream's vectors in blocks of CHUNK memories (block, dimension,
    memory), with each memory's step, code sums and norm; grows by doubling like the stream."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._blocks = np.zeros((1, dim, CHUNK), dtype=np.int8)
        self._step = np.zeros(CHUNK, dtype=np.float64)
        self._code_sum = np.zeros(CHUNK, dtype=np.int64)
        self._code_l1 = np.zeros(CHUNK, dtype=np.float64)
        self._norm = np.zeros(CHUNK, dtype=np.float64)

    def _grow(self) -> None:
        blocks = np.zeros((2 * len(self._blocks), self.dim, CHUNK), dtype=np.int8)
        blocks[: len(self._blocks)] = self._blocks
        self._blocks = blocks
        for name in ("_step", "_code_sum", "_code_l1", "_norm"):
            old = getattr(self, name)
            grown = np.zeros(len(blocks) * CHUNK, dtype=old.dtype)
            grown[: len(old)] = old
            setattr(self, name, grown)

    def extend(self, start: int, vectors: np.ndarray) -> None:
        """Store the codes of `vectors` (rows) as memories start, start + 1, ..."""
        while start + len(vectors) > len(self._step):
            self._grow()
        peaks = np.abs(vectors).max(axis=1).astype(np.float64)
        steps = peaks / 127
        safe = np.where(steps > 0, steps, 1.0)
        codes = np.clip(np.rint(vectors / safe[:, None]), -127, 127).astype(np.int8)
        codes[steps == 0] = 0
        end = start + len(vectors)
        index = start
        while index < end:
            block, column = divmod(index, CHUNK)
            stop = min(end, (block + 1) * CHUNK)
            self._blocks[block, :, column: column + stop - index] = codes[index - start: stop - start].T
            index = stop
        self._step[start:end] = steps
        self._code_sum[start:end] = codes.sum(axis=1, dtype=np.int64)
        self._code_l1[start:end] = np.abs(codes).sum(axis=1, dtype=np.int64)
        self._norm[start:end] = np.linalg.norm(vectors.astype(np.float64), axis=1)

    def cosines(self, query: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """For the first `count` memories: estimates of v.q and a bound on how far each can be
        from the exact product (float64 arrays)."""
        peak = float(np.abs(query).max()) if len(query) else 0.0
        if peak == 0:
            return np.zeros(count), np.zeros(count)
        query_step = peak / QUERY_LEVELS
        codes = np.clip(np.rint(query / query_step), -QUERY_LEVELS, QUERY_LEVELS)
        shifted = (codes + QUERY_SHIFT).astype(np.uint8)[None, :]
        blocks = -(-count // CHUNK)
        products = int8_session().run(None, {"q": shifted, "m": self._blocks[:blocks]})[0]
        dots = products.reshape(-1)[:count] - QUERY_SHIFT * self._code_sum[:count]
        step = self._step[:count]
        estimate = dots * (step * query_step)
        query_l1 = float(np.abs(query).sum(dtype=np.float64))
        bound = step * (0.5 * query_l1 + 0.5 * query_step * self._code_l1[:count])
        bound *= 1.01  # rounding in the division and a clipped peak: a little over half a step
        bound += FLOAT32_SLACK * self.dim * float(np.linalg.norm(query)) * self._norm[:count]
        return estimate, bound


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        low, number = number & 0x7F, number >> 7
        out.append(low | (0x80 if number else 0))
        if not number:
            return bytes(out)


def _field(number: int, value: int | str | bytes) -> bytes:
    """One protobuf field: an integer (varint) or bytes/text (length-delimited)."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _tensor(name: str, element: int, dims: list[int | str]) -> bytes:
    shape = b"".join(_field(1, _field(2, d) if isinstance(d, str) else _field(1, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, element) + _field(2, shape)))


def int8_model() -> bytes:
    """The ONNX model y = MatMulInteger(q, m): q (1, d) uint8, m (blocks, d, CHUNK) int8,
    y (blocks, 1, CHUNK) int32. Written out field by field (ModelProto: ir_version 8, opset
    17) so that building it needs no onnx package."""
    uint8, int8, int32 = 2, 3, 6
    node = _field(1, "q") + _field(1, "m") + _field(2, "y") + _field(4, "MatMulInteger")
    graph = (_field(1, node) + _field(2, "int8_cosines")
             + _field(11, _tensor("q", uint8, [1, "d"]))
             + _field(11, _tensor("m", int8, ["k", "d", "c"]))
             + _field(12, _tensor("y", int32, ["k", 1, "c"])))
    return _field(1, 8) + _field(8, _field(1, "") + _field(2, 17)) + _field(7, graph)


@cache
def int8_session() -> Any:
    """One session per process, on one thread like numpy's BLAS (steadier on shared cores);
    onnxruntime is imported only when a stream first needs it."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(int8_model(), options, providers=["CPUExecutionProvider"])
