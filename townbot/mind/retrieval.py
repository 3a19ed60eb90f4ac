"""Retrieval as in the paper: recency, importance and relevance, each min-max normalised.

score = w_recency * recency + w_importance * importance + w_relevance * relevance, where
recency = decay ** (game hours since last access), importance is the 1-10 rating and relevance
is the cosine similarity between the memory's and the query's embeddings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from itertools import chain, repeat, takewhile
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from townbot.mind.memory import NO_ROWS, Memory, MemoryStream, Revisions, hours_since_epoch
from townbot.mind.quantised import Int8Copy

RECENCY_DECAY = 0.995
EXACT_BATCH = 32  # memories scored exactly at a time when the int8 bounds leave them open
DIRECT = 2 * EXACT_BATCH  # open memories few enough to score together, without ordering them
DIRECT_VALUES = 32_768  # vector values worth reading to score them all rather than look up their bounds
SUM_MARGIN = 1e-9  # for the rounding of a few float64 sums of numbers up to a few
SMALL_SORT = 64  # totals sorted whole (timsort inserts up to 64); past that, the best are selected first
QUERIES_KEPT = 16  # queries whose relevance a stream keeps while it holds the same memories


@dataclass(frozen=True)
class RetrievalWeights:
    recency: float = 1.0
    importance: float = 1.0
    relevance: float = 1.0


class Scored(NamedTuple):
    """A retrieved memory with its total and its three normalised terms (a named tuple: a
    retrieval makes dozens of these, and a frozen dataclass took longer to make than to score)."""

    memory: Memory
    score: float
    recency: float
    importance: float
    relevance: float


def scaled(values: np.ndarray, low: float, high: float, out: np.ndarray | None = None) -> np.ndarray:
    """Min-max scaling with extremes found over the whole stream, so that `values` may be only
    the rows a kind filter keeps and still get the same numbers (float64, in `out` if given)."""
    if high - low < 1e-12:
        if out is None:
            return np.full(values.shape, 0.5, dtype=np.float64)
        out.fill(0.5)
        return out
    if out is not None and values.dtype != out.dtype:
        # float32 into float64 (exact), then subtracted in place: the same numbers as a
        # subtraction that casts as it goes, which sets up a buffered loop costing more.
        out[...] = values
        values = out
    # float64 in float64 out: no dtype to resolve (~0.6k instructions).
    result = np.subtract(values, low, dtype=np.float64) if out is None else np.subtract(values, low, out=out)
    result /= high - low
    return result


def unit(query: np.ndarray) -> np.ndarray:
    """The query over its Euclidean norm (as np.linalg.norm computes it for a float vector,
    without its checks: a retrieval over a small stream makes only some twenty numpy calls)."""
    if query.ndim != 1 or query.dtype.kind != "f":
        return query / (np.linalg.norm(query) or 1.0)
    # math.sqrt's float64 root rounds to the root np.sqrt gives in the query's precision (53
    # bits hold twice 24 and 2 more), without a ufunc call on a scalar.
    return query / (math.sqrt(query.dot(query)) or 1.0)


class TimeScale(NamedTuple):
    """What scales recency and importance at one moment: the game hours since the epoch and
    the extremes over the whole stream (recency falls as idle time grows, so its extremes are
    those of the newest and the oldest access)."""

    hours: float
    recency_low: float
    recency_high: float
    importance_low: float
    importance_high: float


def time_scale(stream: MemoryStream, now: datetime, decay: float) -> TimeScale:
    _, importance, accessed = stream.arrays()
    hours = hours_since_epoch(now)
    idle = [max(0.0, hours - float(accessed.max())), max(0.0, hours - float(accessed.min()))]
    low, high = sorted(np.power(decay, idle).tolist())
    return TimeScale(hours, low, high, float(importance.min()), float(importance.max()))


def time_terms(stream: MemoryStream, now: datetime, decay: float, rows: np.ndarray | None,
               scale: TimeScale | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Normalised (recency, importance) at `rows` (all when None), scaled by their extremes over
    the whole stream (`scale`, found when not given); only `rows` are raised to a power."""
    _, importance, accessed = stream.arrays()
    scale = scale or time_scale(stream, now, decay)
    idle = np.subtract(scale.hours, accessed if rows is None else accessed[rows])
    np.maximum(idle, 0.0, out=idle)
    recency = scaled(np.power(decay, idle), scale.recency_low, scale.recency_high)
    importance_n = scaled(importance if rows is None else importance[rows], scale.importance_low,
                          scale.importance_high)
    return recency, importance_n


def terms(stream: MemoryStream, query: np.ndarray, now: datetime, decay: float = RECENCY_DECAY,
          rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised (recency, importance, relevance) of the memories at `rows` (all when None),
    each scaled by its extremes over the whole stream as the paper does: the relevance product
    visits every memory, the rest only `rows`."""
    recency, importance = time_terms(stream, now, decay, rows)
    cosines = stream.arrays()[0].dot(unit(query))  # BLAS's gemv, as `@` calls it
    relevance = scaled(cosines if rows is None else cosines[rows],
                       float(cosines.min()), float(cosines.max()))
    return recency, importance, relevance


def exact_cosines(vectors: np.ndarray, query: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Cosines of a few of the stream's `vectors` with the unit query (float64), summed in
    float64 and rounded to float32 once, so equal vectors get equal values wherever they sit."""
    return (vectors.take(indices, axis=0).astype(np.float64) @ query).astype(np.float32)


def settled_best(bounds: np.ndarray, floor: float, exact: Callable[[np.ndarray], np.ndarray],
                 count: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions whose exact value can be among the `count` highest, and their exact values,
    given an upper bound of each (`bounds`) and a floor the count-th highest is known to reach:
    the open ones are scored exactly best bound first, in batches, until the next bound is
    below the count-th highest exact value found (an equal one could tie, so it is scored
    too). In ascending order of position."""
    open_ = np.flatnonzero(bounds >= floor)
    open_ = open_[np.argsort(-bounds[open_], kind="stable")]
    values = np.empty(0)
    done = 0
    while done < len(open_):
        if len(values) >= count and bounds[open_[done]] < np.partition(values, -count)[-count]:
            break
        values = np.concatenate([values, exact(open_[done: done + EXACT_BATCH])])
        done += EXACT_BATCH
    order = np.argsort(open_[:done])
    return open_[:done][order], values[order]


def cosine_extremes(estimate: np.ndarray, widest: float, bound_of: Callable[[np.ndarray], np.ndarray],
                    cosines: Callable[[np.ndarray], np.ndarray], dim: int) -> tuple[float, float]:
    """The highest and the lowest exact cosine, given estimates each within its own bound and
    all within `widest`. Only memories within twice `widest` of the highest (lowest) estimate
    can hold it; a few are scored together, more are narrowed by their own bounds first (to
    those whose interval reaches the highest lower end, or the lowest upper end) and then, if
    still many, scored best bound first until the rest cannot win."""
    reach = 2 * widest + SUM_MARGIN
    # The ufuncs' own reductions and nonzero: no Python wrappers on a query's longest arrays.
    upper = (estimate >= float(np.maximum.reduce(estimate)) - reach).nonzero()[0]
    lower = (estimate <= float(np.minimum.reduce(estimate)) + reach).nonzero()[0]
    if (len(upper) + len(lower)) * dim > DIRECT_VALUES:
        both = np.concatenate([upper, lower])
        bound = bound_of(both)
        high, low = estimate[both] + bound, estimate[both] - bound
        split = len(upper)
        reaching = high[:split] >= float(low[:split].max())
        upper, upper_bounds = upper[reaching], high[:split][reaching]
        reaching = low[split:] <= float(high[split:].min())
        lower, lower_bounds = lower[reaching], -low[split:][reaching]
        if len(upper) + len(lower) > DIRECT:
            top = settled_best(upper_bounds, -np.inf, lambda positions: cosines(upper[positions]), 1)
            bottom = settled_best(lower_bounds, -np.inf, lambda positions: -cosines(lower[positions]), 1)
            return float(top[1].max()), -float(bottom[1].max())
    values = cosines(np.concatenate([upper, lower]))
    return float(values[: len(upper)].max()), float(values[len(upper):].min())


def bounded_terms(stream: MemoryStream, copy: Int8Copy, query: np.ndarray, now: datetime,
                  weights: RetrievalWeights, decay: float, rows: np.ndarray | None,
                  count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(candidates, recency, importance, relevance) as `terms` gives them, but only for the
    memories that can be among the best `count`: the int8 copy bounds every cosine, and the
    stream's standing terms give recency and importance exactly; the memories that can hold
    the cosines' extremes are scored exactly, and so are those whose best possible total
    reaches the count-th worst possible total; nobody else can be among the best."""
    standing = StandingTerms.of(stream, hours_since_epoch(now), decay, weights)
    query_unit = unit(query)
    estimate, widest, bound_of = copy.first_pass(query_unit)
    vectors, query_unit = stream.arrays()[0], query_unit.astype(np.float64)

    def cosines(indices: np.ndarray) -> np.ndarray:
        return exact_cosines(vectors, query_unit, indices).astype(np.float64)

    top, bottom = cosine_extremes(estimate, widest, bound_of, cosines, stream.dim)
    kept = np.arange(len(stream)) if rows is None else rows
    if top - bottom < 1e-12:
        return kept, standing.recencies[kept], standing.importances[kept], np.full(len(kept), 0.5)
    reach = weights.relevance / (top - bottom)
    # The standing sums are the exact totals' first two terms to the bit, so every exact total
    # is within |reach| * widest (and its own bound), plus rounding, of `middle`.
    middle = np.subtract(estimate if rows is None else estimate[rows], bottom)
    middle *= reach
    middle += standing.standing if rows is None else standing.standing[rows]
    reach = abs(reach)
    near = (middle >= kth_highest(middle, count) - 2 * (reach * widest + SUM_MARGIN)).nonzero()[0]
    if len(near) * stream.dim > DIRECT_VALUES:
        near = open_best(near, middle, lambda positions: reach * bound_of(kept[positions]) + SUM_MARGIN,
                         lambda positions: exact_totals(vectors, query_unit, kept[positions], standing,
                                                        (bottom, top), weights), count)
    candidates = kept[near]
    return candidates, standing.recencies[candidates], standing.importances[candidates], \
        scaled(exact_cosines(vectors, query_unit, candidates), bottom, top)


def open_best(near: np.ndarray, middle: np.ndarray, bound_of: Callable[[np.ndarray], np.ndarray],
              totals: Callable[[np.ndarray], np.ndarray], count: int) -> np.ndarray:
    """Of the positions `near`, those whose exact total can be among the `count` highest, given
    estimates (`middle`) each within its own bound: those whose upper bound reaches the count-th
    highest lower bound, and if still many, those settled_best finds."""
    bound = bound_of(near)
    close = middle[near]
    upper = close + bound
    reaching = np.flatnonzero(upper >= kth_highest(close - bound, count))
    if len(reaching) <= DIRECT:
        return near[reaching]
    return near[reaching[settled_best(upper[reaching], -np.inf,
                                      lambda positions: totals(near[reaching[positions]]), count)[0]]]


def exact_totals(vectors: np.ndarray, query_unit: np.ndarray, indices: np.ndarray,
                 standing: StandingTerms, cosine_ends: tuple[float, float],
                 weights: RetrievalWeights) -> np.ndarray:
    """The totals `weighted` gives the memories at `indices`, to the bit: the standing sums of
    recency and importance with the exact relevance weighted and added."""
    relevance = scaled(exact_cosines(vectors, query_unit, indices), *cosine_ends)
    if weights.relevance != 1.0:  # x * 1.0 is x
        relevance *= weights.relevance
    relevance += standing.standing[indices]
    return relevance


def kth_highest(values: np.ndarray, count: int) -> float:
    """The count-th highest of `values` (np.partition's copy and selection, without its wrapper)."""
    kth = len(values) - count
    chosen = values.copy()
    chosen.partition(kth)
    return float(chosen[kth])


def weighted(recency: np.ndarray, importance: np.ndarray, relevance: np.ndarray,
             weights: RetrievalWeights) -> np.ndarray:
    """The weighted sum, in the order and rounding of w_r*r + w_i*i + w_v*v, with one scratch array."""
    total = recency * weights.recency
    scratch = importance * weights.importance
    total += scratch
    np.multiply(relevance, weights.relevance, out=scratch)
    total += scratch
    return total


class StandingTerms:
    """What every query to one stream shares at one moment, kept on the stream between
    retrievals (a tick's retrievals from one mind share their moment) and brought up to date
    with the memories added or revised since: normalised recency and importance and their
    weighted sum, to which a query adds only its relevance; and each memory's cost in
    tokens. Each value is computed as `terms` and `weighted` compute it, row by row, so the
    totals are theirs to the bit."""

    def __init__(self) -> None:
        self.moment: tuple[float, float] | None = None  # (hours, decay) of the recencies
        self.weights: tuple[float, float] | None = None  # (recency, importance) of the sums
        self.scale: TimeScale | None = None
        self.accessed = (math.nan, math.nan)  # the extremes of last access the scale is for
        # The normalised recency of a memory accessed at the moment, and its weighted part.
        self.fresh = (math.nan, math.nan)
        self.size = 0  # memories covered
        self._allot(64)
        self._view(0, NO_ROWS, NO_ROWS)
        # relevance_of() by query (its dtype, shape and bytes), for the memories covered: a tick
        # asks one stream the same query again (a talk's every line recalls on the relationship
        # and on what the partner is doing); and the query whose relevance the row holds.
        self.by_query: dict[tuple[str, tuple[int, ...], bytes], np.ndarray] = {}
        self.held: tuple[str, tuple[int, ...], bytes] | None = None

    def _allot(self, width: int) -> None:
        """Columns for `width` memories, and a view of each (numpy makes a view a call)."""
        # Rows: room for decay ** idle while the recencies are recomputed, the weighted sum of
        # normalised recency and importance, room for a retrieval's totals, normalised recency
        # and importance, a query's normalised relevance and each memory's cost in tokens (whole
        # numbers): the last five are read for the chosen memories in one step, totals and
        # costs alone when their scores are not asked for.
        self.columns = np.zeros((7, width))
        self.totals, self.recencies, self.importances = self.columns[1], self.columns[3], self.columns[4]
        self.chosen_terms, self.totals_and_costs = self.columns[2:7], self.columns[2:7:4]

    def _view(self, size: int, vectors: np.ndarray, accessed: np.ndarray) -> None:
        """Views over the `size` memories covered, made when their number changes (numpy makes
        a view a call; the stream's arrays stay put while its size does): the columns a
        recompute writes whole, the weighted sums, a retrieval's totals and relevance, and the
        stream's vectors and last-access hours."""
        columns = self.columns
        self.powers, self.standing, self.query_totals = columns[0, :size], columns[1, :size], \
            columns[2, :size]
        self.recency_n, self.importance_n, self.relevance = columns[3, :size], columns[4, :size], \
            columns[5, :size]
        self.vectors, self.accessed_hours = vectors, accessed

    @classmethod
    def of(cls, stream: MemoryStream, hours: float, decay: float,
           weights: RetrievalWeights) -> StandingTerms:
        """The stream's, brought up to date."""
        kept = stream.kept_for_retrieval
        if not isinstance(kept, cls):
            kept = stream.kept_for_retrieval = cls()
        kept.update(stream, hours, decay, (weights.recency, weights.importance))
        return kept

    def update(self, stream: MemoryStream, hours: float, decay: float,
               weights: tuple[float, float]) -> None:
        size = len(stream.memories)
        revised = stream.revisions()
        if size == self.size and not revised.importance and self.moment == (hours, decay) \
                and self.weights == weights:
            if not revised.accessed:
                return
            if self._accessed_now(hours, revised):
                revised.clear()
                return
        self._recompute(stream, size, hours, decay, weights, revised)
        revised.clear()

    def _recompute(self, stream: MemoryStream, size: int, hours: float, decay: float,
                   weights: tuple[float, float], revised: Revisions) -> None:
        """Bring every row that changed up to date (every row when the moment or an extreme moved)."""
        accessed_rows, importance_rows = revised.accessed, revised.importance
        moved = self.moment != (hours, decay)
        self._cover(stream, size)
        vectors, importance, accessed = stream.arrays()
        if size != self.size:
            self.by_query.clear()
            self.held = None
            self._view(size, vectors, accessed)
        old = self.scale
        scale = self._rescale(importance, accessed, hours, decay,
                              bool(accessed_rows) or size > self.size, bool(importance_rows), size)
        every_recency = moved or old is None or old[1:3] != scale[1:3]
        rows = NO_ROWS if every_recency else \
            np.concatenate([*accessed_rows, np.fromiter(importance_rows, dtype=np.intp,
                                                        count=len(importance_rows)),
                            np.arange(self.size, size)])
        # A column recomputed whole is written in place; only some rows, through temporaries.
        power, total, recency, importance_n = self.powers, self.standing, self.recency_n, self.importance_n
        if every_recency:  # every memory aged, or the extremes moved: every power afresh
            np.subtract(hours, accessed, out=power)
            if self.accessed[1] > hours:  # accessed after the moment: no idle time below 0
                np.maximum(power, 0.0, out=power)
            np.power(decay, power, out=power)
            scaled(power, scale.recency_low, scale.recency_high, out=recency)
        else:
            idle = np.subtract(hours, accessed[rows])
            np.maximum(idle, 0.0, out=idle)
            recency[rows] = scaled(np.power(decay, idle), scale.recency_low, scale.recency_high)
        every_importance = old is None or old[3:] != scale[3:]
        if every_importance:
            scaled(importance, scale.importance_low, scale.importance_high, out=importance_n)
        elif importance_rows:
            at = np.fromiter(chain(importance_rows, range(self.size, size)), dtype=np.intp)
            importance_n[at] = scaled(importance[at], scale.importance_low, scale.importance_high)
        elif size > self.size:  # only memories added: the rows after those covered
            scaled(importance[self.size: size], scale.importance_low, scale.importance_high,
                   out=importance_n[self.size: size])
        if every_recency or every_importance or self.weights != weights:
            weighted_pair(recency, importance_n, weights, out=total)
        else:
            total[rows] = weighted_pair(recency[rows], importance_n[rows], weights)
        span = scale.recency_high - scale.recency_low
        fresh = 0.5 if span < 1e-12 else (unaged(decay) - scale.recency_low) / span  # as `scaled`
        self.fresh = fresh, fresh * weights[0]
        self.moment, self.weights, self.size = (hours, decay), weights, size

    def relevance_of(self, query: np.ndarray) -> np.ndarray:
        """Each memory's cosine with the query, min-max normalised over the stream, in the
        relevance row (kept by query until the stream grows: one asked again is copied back)."""
        key = (query.dtype.char, query.shape, query.tobytes())
        relevance = self.relevance
        if key != self.held:
            known = self.by_query.get(key)
            if known is None:
                cosines = self.vectors.dot(unit(query))  # BLAS's gemv, as `@` calls it
                scaled(cosines, lowest(cosines), highest(cosines), out=relevance)
                if len(self.by_query) >= QUERIES_KEPT:
                    self.by_query.clear()
                self.by_query[key] = relevance.copy()
            else:
                relevance[...] = known
            self.held = key
        return relevance

    def _accessed_now(self, hours: float, revised: Revisions) -> bool:
        """Bring up to date rows accessed at this very moment, when the extremes of last access
        stay put (False, changing nothing, otherwise): the rows a retrieval touched, which the
        next retrieval of the tick finds. Each gets the terms of no idle time, as `update`
        computes them, without its work over the whole stream."""
        if revised.accessed_at != {hours} or self.accessed[1] != hours or \
                lowest(self.accessed_hours) != self.accessed[0]:
            return False
        touched = revised.accessed
        rows = touched[0] if len(touched) == 1 else np.concatenate(touched)
        recency, part = self.fresh
        # One row of the columns at a time: indexing a row's view with `rows` costs a third of
        # indexing the matrix with (row, rows).
        self.recencies[rows] = recency
        total = self.importances[rows]
        if self.weights[1] != 1.0:
            total *= self.weights[1]
        total += part  # weighted_pair's sum (x * 1.0 is x)
        self.totals[rows] = total
        return True

    def _cover(self, stream: MemoryStream, size: int) -> None:
        """Room for `size` memories, and the costs of those added since."""
        if size > self.columns.shape[1]:
            columns = self.columns
            self._allot(max(size, 2 * columns.shape[1]))
            self.columns[:, : self.size] = columns[:, : self.size]
        if size > self.size:
            self.columns[6, self.size: size] = [len(memory.text) // 4 + 1
                                           for memory in stream.memories[self.size: size]]

    def _rescale(self, importance: np.ndarray, accessed: np.ndarray, hours: float, decay: float,
                 accessed_changed: bool, importance_changed: bool, size: int) -> TimeScale:
        """time_scale's extremes over the stream's `importance` and `accessed` hours, looking
        again only at what changed (`importance_changed`: in place; memories up to `size` may
        have been added since)."""
        old = self.scale
        if old is None or importance_changed:
            importance_ends = lowest(importance), highest(importance)
        elif size > self.size:  # only added: their extremes widen the kept ones
            fresh = importance[self.size: size].tolist()
            importance_ends = min(old.importance_low, *fresh), max(old.importance_high, *fresh)
        else:
            importance_ends = old.importance_low, old.importance_high
        ends = self.accessed
        if old is None or accessed_changed:
            ends = lowest(accessed), highest(accessed)
        if old is None or ends != self.accessed or self.moment != (hours, decay):
            idle = [max(0.0, hours - ends[1]), max(0.0, hours - ends[0])]
            recency_ends = sorted(np.power(decay, idle).tolist())
        else:
            recency_ends = [old.recency_low, old.recency_high]
        self.accessed = ends
        self.scale = TimeScale(hours, *recency_ends, *importance_ends)
        return self.scale


def lowest(values: np.ndarray) -> float:
    """np.minimum.reduce(values) as a float (NaN if any is): argmin's loop costs ~3k
    instructions over a stream's column, a reduction ~8k (it sets up an iterator). Of equal
    values it takes the first, so where both zeros are present its zero's sign may differ from
    the reduction's; what `scaled` makes of it then differs only in the sign of a zero, which
    no total can tell (access hours and importance are positive, and BLAS sums cosines from
    +0.0)."""
    return values.item(values.argmin())


def highest(values: np.ndarray) -> float:
    """np.maximum.reduce(values) as a float, as `lowest` finds the lowest."""
    return values.item(values.argmax())


@cache
def unaged(decay: float) -> float:
    """decay ** 0 as np.power gives it over an array (the power of a memory accessed now)."""
    return float(np.power(decay, np.zeros(1))[0])


def weighted_pair(recency: np.ndarray, importance: np.ndarray, weights: tuple[float, float],
                  out: np.ndarray | None = None) -> np.ndarray:
    """w_r*r + w_i*i as `weighted` begins its sum, in `out` if given (a weight of 1 multiplies
    nothing: x * 1.0 is x)."""
    first = np.multiply(recency, weights[0], out=out) if weights[0] != 1.0 else recency
    return np.add(first, importance * weights[1] if weights[1] != 1.0 else importance, out=out)


def standing_best(stream: MemoryStream, query: np.ndarray, hours: float,
                  weights: RetrievalWeights, rows: np.ndarray | None, count: int,
                  scores: bool) -> Chosen:
    """The best `count` memories by `terms` and `weighted` at `hours` (hours_since_epoch), over
    a stream without an int8 copy: a query computes its cosines and relevance and adds them to
    the kept standing sums; their scores only when `scores` asks for them."""
    kept = StandingTerms.of(stream, hours, RECENCY_DECAY, weights)
    relevance = kept.relevance_of(query)
    total = np.add(kept.standing, relevance * weights.relevance if weights.relevance != 1.0 else relevance,
                   out=kept.query_totals)  # every memory's: a kind filter's rows are picked after
    ids = best_first(total, count) if rows is None else rows[best_first(total[rows], count)]
    # take(axis=1) reads the chosen columns in a quarter of the time of [:, ids]
    if scores:
        totals, recency, importance, relevance_n, costs = kept.chosen_terms.take(ids, axis=1).tolist()
        return Chosen(ids.tolist(), totals, costs, (totals, recency, importance, relevance_n))
    totals, costs = kept.totals_and_costs.take(ids, axis=1).tolist()
    return Chosen(ids.tolist(), totals, costs)


class Chosen(NamedTuple):
    """The chosen memories' positions, totals and costs in tokens, best first, and when asked
    for, their scores as Scored lists them: total, normalised recency, importance and
    relevance (Python lists)."""

    ids: list[int]
    total: list[float]
    costs: list[float] | list[int]
    scores: tuple[list[float], ...] = ()


def score_stream(stream: MemoryStream, query: np.ndarray, now: datetime,
                 weights: RetrievalWeights = RetrievalWeights(),
                 decay: float = RECENCY_DECAY,
                 kinds: tuple[str, ...] | None = None) -> tuple[np.ndarray, ...]:
    """Normalised (total, recency, importance, relevance) for every memory in the stream; the
    total is -inf for memories of other kinds than `kinds`."""
    recency, importance, relevance = terms(stream, query, now, decay)
    total = weighted(recency, importance, relevance, weights)
    if kinds is not None:
        total[~stream.kind_mask(kinds)] = -np.inf
    return total, recency, importance, relevance


def best_first(total: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` highest totals, highest first, equal totals oldest first: a
    partial selection, then a stable sort of only what it kept and the ties at its edge."""
    if count >= len(total) or len(total) <= SMALL_SORT:
        return (-total).argsort(kind="stable")[:count]
    selected = total.copy()  # np.partition's copy, without its Python steps
    selected.partition(len(total) - count)
    edge = selected[len(total) - count]
    kept = (total >= edge).nonzero()[0]
    return kept[(-total[kept]).argsort(kind="stable")[:count]]


def retrieve(stream: MemoryStream, query: np.ndarray, now: datetime, *, limit: int = 10,
             token_budget: int | None = None, weights: RetrievalWeights = RetrievalWeights(),
             kinds: tuple[str, ...] | None = None, touch: bool = True) -> list[Scored]:
    """The best memories for a query, highest score first, within a count and token budget,
    with their scores. Only the memories of `kinds` are scored, against the extremes of the
    whole stream."""
    found = choose(stream, query, now, limit, token_budget, weights, kinds, touch, True)
    if found is None:
        return []
    ids, terms = found
    columns = zip(map(stream.memories.__getitem__, ids), *terms, strict=True)
    return list(map(tuple.__new__, repeat(Scored), columns))  # Scored(...) with no Python call each


def recall(stream: MemoryStream, query: np.ndarray, now: datetime, *, limit: int = 10,
           token_budget: int | None = None, weights: RetrievalWeights = RetrievalWeights(),
           kinds: tuple[str, ...] | None = None, touch: bool = True) -> list[Memory]:
    """retrieve's memories without their scores (for callers that read nothing else: no
    score is made into a Python float but the totals the token budget checks)."""
    found = choose(stream, query, now, limit, token_budget, weights, kinds, touch, False)
    return [] if found is None else list(map(stream.memories.__getitem__, found[0]))


def choose(stream: MemoryStream, query: np.ndarray, now: datetime, limit: int,
           token_budget: int | None, weights: RetrievalWeights, kinds: tuple[str, ...] | None,
           touch: bool, scores: bool) -> tuple[Sequence[int], Iterable[Sequence[float]]] | None:
    """The positions of the memories retrieve returns, best first, and their scores when
    `scores` asks for them (None when there are none); touched when `touch` says so."""
    size = len(stream.memories)
    if size == 0:
        return None
    if kinds is None:
        rows, count = None, min(limit, size)
    else:
        rows = stream.kind_rows(kinds)
        if len(rows) == 0:
            return None
        count = min(limit, len(rows))
    copy = stream.int8_copy()
    hours = None
    if copy is None:
        hours = hours_since_epoch(now)
        best = standing_best(stream, query, hours, weights, rows, count, scores)
    else:
        best = bounded_best(stream, copy, query, now, weights, rows, count, scores)
    ids: Sequence[int] = best.ids  # the memories' ids: their positions
    terms: Iterable[Sequence[float]] = best.scores
    kept = affordable(best.costs, best.total, token_budget)
    if kept is not None:  # only those kept are read on
        if not kept:
            return None
        take = picker(kept)
        ids, terms = take(ids), map(take, terms)
    if touch:
        stream.touch(ids, now, hours)
    return ids, terms


def bounded_best(stream: MemoryStream, copy: Int8Copy, query: np.ndarray, now: datetime,
                 weights: RetrievalWeights, rows: np.ndarray | None, count: int,
                 scores: bool) -> Chosen:
    """The best `count` memories as standing_best chooses them, over a stream with an int8
    copy (among the candidates bounded_terms leaves)."""
    ids, recency, importance, relevance = bounded_terms(stream, copy, query, now, weights,
                                                        RECENCY_DECAY, rows, count)
    total = weighted(recency, importance, relevance, weights)
    best = best_first(total, count)
    # Python floats and ints of the few chosen rows, taken in one step each: reading numpy
    # scalars one at a time cost more than scoring the whole stream.
    chosen_ids = ids[best].tolist()
    memories = stream.memories
    costs = [len(memories[index].text) // 4 + 1 for index in chosen_ids]
    totals = total[best].tolist()
    if not scores:
        return Chosen(chosen_ids, totals, costs)
    return Chosen(chosen_ids, totals, costs, (totals, recency[best].tolist(), importance[best].tolist(),
                                              relevance[best].tolist()))


def picker(positions: list[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """itemgetter(*positions), which gives a tuple of one position too."""
    if len(positions) == 1:
        only = positions[0]
        return lambda values: (values[only],)
    return itemgetter(*positions)


def affordable(costs: list[float] | list[int], totals: list[float],
               token_budget: int | None) -> list[int] | None:
    """The positions of the chosen memories (best first, with their costs in tokens) retrieval
    returns, None for all: those before the first non-finite total that fit the token budget,
    taken in order (a long memory that does not fit leaves room for shorter ones)."""
    if not math.isfinite(sum(totals)):
        totals = list(takewhile(math.isfinite, totals))
        costs = costs[: len(totals)]
    elif token_budget is None or sum(costs) <= token_budget:
        return None
    room = math.inf if token_budget is None else token_budget
    kept: list[int] = []
    for at, cost in enumerate(costs):  # costs and budget are whole numbers: room - cost is exact
        if cost <= room:
            room -= cost
            kept.append(at)
    return kept
