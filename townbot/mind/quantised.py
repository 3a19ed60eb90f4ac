"""An int8 copy of a stream's embeddings: a first pass that bounds every cosine for a quarter of
the bytes, so that retrieval at high dimensions reads 15 MB instead of 61 MB per query over 10k
memories of 1536 dimensions, and scores exactly only the few memories the bounds cannot settle.

Each memory v is stored as codes a = round(v / s) with s = max|v| / 127, and the query q as
b = round(q / t) with t = max|q| / 127. With the rounding errors e_v = v - s a and
e_q = q - t b, v.q - s t (a.b) = e_v.q + s (a.e_q), so
|v.q - s t (a.b)| <= min(||e_v||_inf ||q||_1, ||e_v||_2 ||q||_2)
                    + s min(||a||_1 ||e_q||_inf, ||a||_2 ||e_q||_2)
(Hoelder and Cauchy-Schwarz; each memory's norms are kept, the query's taken per query), plus
float32 rounding of an exact product. The product a.b is integer arithmetic in onnxruntime
(already a dependency for the local embedder): MatMulInteger of uint8 codes shifted by 128
with zero points 128, whose kernel widens to 16 bits before multiplying, so unlike the
u8 x s8 one it cannot saturate on a machine without VNNI and the query keeps all 8 bits.

The memories are the product's constant right-hand matrix: onnxruntime packs a constant once,
when its session is made, and an input on every call (which made the pass compute-bound, 3 ms
at 10k x 1536). So the memories sit in segments of SEGMENT rows, each its own session made
once when it fills; the segment still filling has a session remade when REFRESH memories have
arrived since (only when retrieval asks), and those newest few go through a session that
takes them as an input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import numpy as np

MIN_DIM = 256  # below this the float32 product of 10k memories is about as fast as the int8 one
MIN_ROWS = 4096  # and so it is for fewer memories at any dimension
SEGMENT = 4096  # memories per constant matrix: a session made once for each
REFRESH = 256  # memories that may arrive before the filling segment's session is remade
STORE_ROWS = 1024  # memories coded at a time: 4 float64 scratch arrays of 12 MB at 1536 dimensions
LEVELS = 127  # a memory's codes: -127..127 (int8)
QUERY_LEVELS = 63  # a query's: -63..63, stored as 1..127 (uint8) with 64 for 0
QUERY_ZERO = 64
QUERY_ROWS = 2  # the query's codes and its rounding error's
FLOAT32_SLACK = 2.0 ** -22  # twice float32's unit roundoff, per dimension, on |v| |q|
MARGIN = 1.0 + 1e-6  # rounding in the norms and the division: far above float64's error
TINY = 1e-140  # below this a Euclidean norm may have lost digits to underflowing squares


def worth_keeping(dim: int) -> bool:
    """Whether a stream of this dimension keeps an int8 copy (it costs a quarter more memory)."""
    return dim >= MIN_DIM


def codes_of(values: np.ndarray, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """(codes, steps) of the rows of `values`: codes = round(row / step) with step = max|row| /
    levels, as float64 (an all-zero row gets step 0 and codes 0)."""
    values = np.asarray(values, dtype=np.float64)
    steps = np.abs(values).max(axis=1) / levels
    safe = np.where(steps > 0, steps, 1.0)
    codes = np.clip(np.rint(values / safe[:, None]), -levels, levels)
    codes[steps == 0] = 0
    return codes, steps


def euclidean(vector: np.ndarray, magnitude: np.ndarray) -> float:
    """The Euclidean norm of a vector as l2_norms gives it (`magnitude` is |vector|)."""
    l2 = math.sqrt(float(vector @ vector))
    return l2 if l2 >= TINY else float(magnitude.sum())


class QueryCodes(NamedTuple):
    """What coding a query leaves beside its codes: the steps of its two rows, and the norms the
    bound needs (the query's L1 and Euclidean, and those of what the codes leave over)."""

    step: float
    rest_step: float
    norms: tuple[float, float, float, float]  # L1, Euclidean; largest magnitude, Euclidean left


def code_query(query: np.ndarray, codes: np.ndarray) -> QueryCodes | None:
    """Write the query (float64) into `codes` (QUERY_ROWS x dim, uint8, QUERY_ZERO for 0): its
    own codes at one step, then its rounding error's at a finer one; None if it is all zeros."""
    magnitude = np.abs(query)
    peak = float(magnitude.max())
    if not peak:
        return None
    query_l1 = float(magnitude.sum())
    query_l2 = math.sqrt(float(query @ query))
    steps = []
    rest = query
    for row in codes:
        step = peak / QUERY_LEVELS
        if step > 0:  # then |rest / step| <= QUERY_LEVELS, a rounding off at most
            levels = np.rint(np.divide(rest, step))
            rest = rest - levels * step
            np.add(levels, QUERY_ZERO, out=row, casting="unsafe")
            magnitude = np.abs(rest)
            peak = float(magnitude.max())
        else:
            row.fill(QUERY_ZERO)
        steps.append(step)
    return QueryCodes(steps[0], steps[1], (query_l1, query_l2 if query_l2 >= TINY else query_l1,
                                           peak, euclidean(rest, magnitude)))


def l2_norms(rows: np.ndarray, l1: np.ndarray) -> np.ndarray:
    """The Euclidean norms of `rows` (2-D), or their L1 norms (never smaller) where a norm is
    small enough for the squares to have lost digits to underflow."""
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    return np.where(norms < TINY, l1, norms)


def bound_of(error_inf: Any, error_l2: Any, scaled_l1: Any, scaled_l2: Any, norm: Any,
             query_l1: float, query_l2: float, left_inf: float, left_l2: float, dim: int,
             minimum: Callable[[Any, Any], Any] = np.minimum) -> Any:
    """The module docstring's bound for memories with these stats (arrays, or floats with the
    built-in `minimum`), given the query's norms and those of what its codes leave over;
    larger when any stat is."""
    bound = minimum(error_inf * query_l1, error_l2 * query_l2)
    bound += minimum(scaled_l1 * left_inf, scaled_l2 * left_l2)
    bound *= MARGIN
    bound += FLOAT32_SLACK * dim * query_l2 * norm
    return bound


class Int8Copy:
    """The uint8 codes of a stream's vectors with each memory's step and the norms its bound
    needs; full segments live only inside their sessions, the filling one also in `_open`
    (dimension-major, as the product wants it)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._count = 0  # memories coded
        self._received = 0  # and those that arrived, coded or not
        self._pending: list[np.ndarray] = []  # the vectors that arrived since the last query
        self._open = np.zeros((dim, SEGMENT), dtype=np.int8)
        self._full: list[np.ndarray] = []  # full segments' codes until a query makes their products
        self._sealed: list[PackedProduct] = []  # one per full segment
        self._filling: PackedProduct | None = None  # over the filling segment's first _filled
        self._filled = 0
        self._query = np.zeros((QUERY_ROWS, dim), dtype=np.uint8)  # every product's input
        self._backwards = False  # the order the last query read the segments in
        # Per memory: step s, ||e_v||_inf, ||e_v||_2, s ||a||_1, s ||a||_2 and ||v||_2.
        self._stats = np.zeros((6, SEGMENT), dtype=np.float64)
        self._peaks = np.zeros(6, dtype=np.float64)  # each stat's largest value

    @property
    def nbytes(self) -> int:
        """The codes' bytes (onnxruntime holds the full segments' packed copies)."""
        return self._received * self.dim

    def extend(self, start: int, vectors: np.ndarray) -> None:
        """Take `vectors` (rows, which must not change afterwards) as memories start, start + 1,
        ... (in order). They are coded when a query comes, all that arrived since in one pass:
        coding one memory took 30 numpy calls, 25 times a stream's own add."""
        if start != self._received:
            raise ValueError(f"int8 copy holds {self._received} memories; cannot store memory {start}")
        self._pending.append(vectors)
        self._received += len(vectors)

    def _catch_up(self) -> None:
        """Code the memories that arrived since the last query, STORE_ROWS at a time so that the
        float64 scratch stays small."""
        if not self._pending:
            return
        vectors = self._pending[0] if len(self._pending) == 1 else np.concatenate(self._pending)
        self._pending = []
        while self._received > self._stats.shape[1]:
            grown = np.zeros((6, 2 * self._stats.shape[1]), dtype=np.float64)
            grown[:, : self._stats.shape[1]] = self._stats
            self._stats = grown
        done = 0
        while done < len(vectors):
            column = self._count % SEGMENT
            take = min(len(vectors) - done, SEGMENT - column, STORE_ROWS)
            self._store(vectors[done: done + take], column)
            done += take
            if self._count % SEGMENT == 0:  # full: its product is packed when a query needs it
                self._full.append(self._open)
                self._open = np.zeros((self.dim, SEGMENT), dtype=np.int8)
                self._filling, self._filled = None, 0

    def _store(self, vectors: np.ndarray, column: int) -> None:
        """Codes and stats of a few memories that fit in the filling segment from `column`."""
        exact = np.asarray(vectors, dtype=np.float64)
        codes, steps = codes_of(exact, LEVELS)
        scaled = codes * steps[:, None]
        error = np.abs(exact - scaled)
        stats = self._stats[:, self._count: self._count + len(exact)]
        scaled_l1 = np.abs(scaled).sum(axis=1)
        stats[:] = (steps, error.max(axis=1, initial=0.0), l2_norms(error, error.sum(axis=1)),
                    scaled_l1, l2_norms(scaled, scaled_l1), l2_norms(exact, np.abs(exact).sum(axis=1)))
        np.maximum(self._peaks, stats.max(axis=1, initial=0.0), out=self._peaks)
        self._open[:, column: column + len(exact)] = codes.T
        self._count += len(exact)

    def _products(self) -> np.ndarray:
        """The products of the query's rows of codes (`_query`) with every stored memory's codes
        (int32, one row per query row): the full segments' (packed the first time), the filling
        one's (packed anew when REFRESH memories have arrived since) and the newest few's."""
        while self._full:
            self._sealed.append(PackedProduct(self._full.pop(0), self._query))
        filling = self._count % SEGMENT
        if filling - self._filled >= REFRESH:
            self._filling, self._filled = PackedProduct(self._open[:, :filling], self._query), filling
        packed = [*self._sealed, self._filling] if self._filling is not None and self._filled \
            else self._sealed
        # Every other query reads the segments last to first: what one query read last (as
        # much as L2 holds, most of the codes at 256 dimensions) is then still there for the
        # next, where reading in one order always finds the first segments evicted.
        self._backwards = not self._backwards
        parts = [product.run() for product in (packed[::-1] if self._backwards else packed)]
        if self._backwards:
            parts.reverse()
        if filling > self._filled:
            newest = np.ascontiguousarray(self._open[:, self._filled: filling])
            parts.append(input_session().run(None, {"q": self._query, "m": newest})[0])
        return np.concatenate(parts, axis=1)

    def first_pass(self, query: np.ndarray) -> tuple[np.ndarray, float, Callable[[np.ndarray], np.ndarray]]:
        """(an estimate of v.q for every stored memory, a bound on how far any of them can be
        from its exact product, and a function giving the listed memories' own bounds, each no
        wider than that one): float64."""
        self._catch_up()
        coded = code_query(np.asarray(query, dtype=np.float64), self._query) if self._count else None
        if coded is None:  # no memories, or a query of zeros
            return np.zeros(self._count), 0.0, lambda indices: np.zeros(len(indices))
        products = self._products()
        values = products[0] * coded.step
        values += products[1] * coded.rest_step
        values *= self._stats[0, : self._count]
        norms = coded.norms
        _, *peaks = self._peaks.tolist()
        widest = bound_of(*peaks, *norms, self.dim, minimum=min)
        return values, widest, lambda indices: bound_of(*self._stats[1:, indices], *norms, self.dim)

    def cosines(self, query: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """For the first `count` memories: estimates of v.q and a bound on how far each can be
        from the exact product (float64 arrays)."""
        values, _, bound_of = self.first_pass(query)
        return values[:count], bound_of(np.arange(count))


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


UINT8, INT8, INT32 = 2, 3, 6  # ONNX element types


def _value(name: str, element: int, dims: list[int | str]) -> bytes:
    """A graph input or output (ValueInfoProto) with a named or fixed size per dimension."""
    shape = b"".join(_field(1, _field(2, d) if isinstance(d, str) else _field(1, d)) for d in dims)
    return _field(1, name) + _field(2, _field(1, _field(1, element) + _field(2, shape)))


def _constant(name: str, array: np.ndarray) -> list[bytes | memoryview]:
    """A uint8 or int8 initializer (TensorProto: dims, data type, name, raw bytes) as pieces
    to join: the array's bytes are not copied until then."""
    dims = b"".join(_field(1, size) for size in array.shape)
    element = UINT8 if array.dtype == np.uint8 else INT8
    data = memoryview(np.ascontiguousarray(array)).cast("B")
    return [dims + _field(2, element) + _field(8, name) + _varint(9 << 3 | 2) + _varint(len(data)),
            data]


def _message(number: int, pieces: list[bytes | memoryview]) -> list[bytes | memoryview]:
    """A length-delimited field holding `pieces` (joined later)."""
    return [_varint(number << 3 | 2) + _varint(sum(len(piece) for piece in pieces)), *pieces]


def int8_model(memories: np.ndarray | None) -> bytes:
    """The ONNX model y = MatMulInteger(q, m, 64): q (2, d) the query's codes (uint8, 64 for 0),
    m (d, n) the memories' (int8; a constant when given, else an input), y (2, n) int32.
    Written out field by field (ModelProto: ir_version 8, opset 17) so that building it needs
    no onnx package, and joined once, so that the memories' bytes are copied once."""
    node = (_field(1, "q") + _field(1, "m") + _field(1, "zero") + _field(2, "y")
            + _field(4, "MatMulInteger"))
    graph: list[bytes | memoryview] = [
        _field(1, node), _field(2, "int8_cosines"),
        *_message(5, _constant("zero", np.array(QUERY_ZERO, dtype=np.uint8))),
        _field(11, _value("q", UINT8, [QUERY_ROWS, "d"])),
        _field(12, _value("y", INT32, [QUERY_ROWS, "n" if memories is None else memories.shape[1]]))]
    if memories is None:
        graph.append(_field(11, _value("m", INT8, ["d", "n"])))
    else:
        graph += _message(5, _constant("m", memories))
    header = _field(1, 8) + _field(8, _field(1, "") + _field(2, 17))
    return b"".join([header, *_message(7, graph)])


def session_of(model: bytes) -> Any:
    """A session on one thread like numpy's BLAS (steadier on shared cores); onnxruntime is
    imported only when a stream first needs it."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


class PackedProduct:
    """A session whose memories (d, n) are packed once, as it is made, with the query's buffer
    (read in place) and its output bound to it once: a query then costs one call, not the
    half of a small product's time that building inputs and outputs took."""

    def __init__(self, memories: np.ndarray, query: np.ndarray) -> None:
        import onnxruntime

        self._session = session_of(int8_model(np.ascontiguousarray(memories)))
        self._query = query  # bound by address: kept alive here
        self._out = np.empty((QUERY_ROWS, memories.shape[1]), dtype=np.int32)
        self._binding = self._session.io_binding()
        self._binding.bind_ortvalue_input("q", onnxruntime.OrtValue.ortvalue_from_numpy(query))
        self._binding.bind_output("y", "cpu", 0, np.int32, self._out.shape, self._out.ctypes.data)

    def run(self) -> np.ndarray:
        """The product with the query's buffer as it is now (the same array each time)."""
        self._session.run_with_iobinding(self._binding)
        return self._out


@cache
def input_session() -> Any:
    """One session per process for memories given with each query."""
    return session_of(int8_model(None))
