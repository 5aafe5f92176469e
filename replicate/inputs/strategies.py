"""Hypothesis strategies for one argument slot, from observed values and from type hints.

`observe` reads the shape of the plain values a slot took in the traced calls (kinds, integer and
float ranges, string alphabets and lengths, element shapes, fixed tuple arities); `from_shape`
turns a shape into a strategy whose ranges and lengths are the observed ones, widened; `from_hint`
reads a builtin-only annotation (`int`, `list[str]`, `Optional[dict[str, int]]`, `X | None` ...).
`draw` runs hypothesis on the trusted side, derandomised, without a database, and only ever
produces plain values.  Floats are drawn as multiples of 1/8: their sums and products are exact,
so an alternative implementation that adds in another order still agrees with the reference.
"""

from __future__ import annotations

import ast
import contextlib
import math
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from hypothesis.internal.conjecture import providers as _providers

from replicate.core import PARSE_LOCK
from replicate.inputs.signature import parse_expression
from replicate.values import Items

Strategy = st.SearchStrategy[Any]
MAX_LEN = 24  # longest generated container or string
_ELEMENT_KINDS = ("list", "set", "frozenset", "iter", "tuple")
_EXTRA_CHARS = (
    " %/&.-\u00e9"  # beyond the observed alphabet: what quoting, splitting, casing act on
)


@dataclass
class Shape:
    """What a slot's observed values look like (mutable while observing)."""

    kinds: set[str] = field(default_factory=set)
    ints: list[int] = field(default_factory=list)
    floats: list[float] = field(default_factory=list)
    chars: set[str] = field(default_factory=set)
    strings: list[str] = field(default_factory=list)
    byte_lens: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)  # of containers
    arities: set[int] = field(default_factory=set)  # of tuples
    elements: dict[str, Shape] = field(default_factory=dict)  # per container kind
    columns: list[Shape] = field(default_factory=list)  # per position of fixed-arity tuples
    keys: Shape | None = None
    values: Shape | None = None
    steps: set[int] = field(default_factory=set)  # of ranges


def kind_of(value: Any) -> str:
    return "iter" if type(value) is Items else type(value).__name__


def observe(values: Iterable[Any], shape: Shape | None = None, depth: int = 0) -> Shape:
    """Merge plain `values` into `shape` (a new one when None)."""
    shape = shape if shape is not None else Shape()
    for value in values:
        _observe_one(value, shape, depth)
    return shape


def _observe_one(value: Any, shape: Shape, depth: int) -> None:
    kind = kind_of(value)
    shape.kinds.add(kind)
    if kind == "int":
        shape.ints.append(value)
    elif kind == "float":
        shape.floats.append(value)
    elif kind == "str":
        shape.chars.update(value[:200])
        shape.strings.append(value)
    elif kind == "bytes":
        shape.byte_lens.append(len(value))
    elif kind == "range":
        shape.ints.extend((value.start, value.stop))
        shape.steps.add(value.step)
    elif kind == "dict" and depth < 8:
        shape.lengths.append(len(value))
        shape.keys = observe(value.keys(), shape.keys, depth + 1)
        shape.values = observe(value.values(), shape.values, depth + 1)
    elif kind in _ELEMENT_KINDS and depth < 8:
        items = list(value.items if kind == "iter" else value)
        shape.lengths.append(len(items))
        if kind == "tuple":
            _observe_tuple(items, shape, depth)
        shape.elements[kind] = observe(items, shape.elements.get(kind), depth + 1)


def _observe_tuple(items: list[Any], shape: Shape, depth: int) -> None:
    shape.arities.add(len(items))
    if len(shape.arities) == 1:
        while len(shape.columns) < len(items):
            shape.columns.append(Shape())
        for column, item in zip(shape.columns, items, strict=False):
            observe([item], column, depth + 1)


# ---------------------------------------------------------------- shapes -> strategies


def _widen(low: int, high: int) -> tuple[int, int]:
    pad = max(3, (high - low) // 2)
    return low - pad, high + pad


def _ints(values: Sequence[int]) -> Strategy:
    low, high = _widen(min(values), max(values))
    return st.integers(low, high)


def _floats(values: Sequence[float]) -> Strategy | None:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return None
    low, high = min(finite), max(finite)
    if max(abs(low), abs(high)) > 2.0**40:
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    eighths = _widen(math.floor(low * 8), math.ceil(high * 8))
    return st.integers(*eighths).map(lambda k: k / 8)


def _texts(shape: Shape) -> Strategy:
    longest = min(MAX_LEN, max(len(s) for s in shape.strings) + 3)
    alphabet = sorted(shape.chars | set(_EXTRA_CHARS))
    made = st.text(alphabet=st.sampled_from(alphabet), max_size=longest)
    seen = sorted(set(shape.strings), key=lambda s: (len(s), s))[:50]
    return st.one_of(made, st.sampled_from(seen)) if seen else made


def _max_len(shape: Shape) -> int:
    return min(MAX_LEN, max(shape.lengths, default=0) + 3)


def _container(kind: str, shape: Shape) -> Strategy | None:
    if kind == "tuple" and len(shape.arities) == 1 and shape.columns:
        parts = [from_shape(column) for column in shape.columns]
        if all(p is not None for p in parts):
            return st.tuples(*parts)
    inner = shape.elements.get(kind)
    element = from_shape(inner) if inner is not None else None
    size = _max_len(shape)
    if element is None:
        element, size = st.nothing(), 0
    if kind in ("set", "frozenset"):
        made: Strategy = st.sets(element, max_size=size)
        return made.map(frozenset) if kind == "frozenset" else made
    listed = st.lists(element, max_size=size)
    if kind == "tuple":
        return listed.map(tuple)
    if kind == "iter":
        return listed.map(lambda xs: Items(tuple(xs)))
    return listed


def _dicts(shape: Shape) -> Strategy | None:
    keys = from_shape(shape.keys) if shape.keys is not None else None
    values = from_shape(shape.values) if shape.values is not None else None
    if keys is None or values is None:
        return st.just({})
    return st.dictionaries(keys, values, max_size=_max_len(shape))


def _ranges(shape: Shape) -> Strategy:
    low, high = _widen(min(shape.ints), max(shape.ints))
    steps = sorted(shape.steps)
    return st.builds(range, st.integers(low, high), st.integers(low, high), st.sampled_from(steps))


def _for_kind(kind: str, shape: Shape) -> Strategy | None:
    if kind == "none":
        return st.none()
    if kind == "bool":
        return st.booleans()
    if kind == "int":
        return _ints(shape.ints)
    if kind == "float":
        return _floats(shape.floats)
    if kind == "str":
        return _texts(shape)
    if kind == "bytes":
        return st.binary(max_size=min(MAX_LEN, max(shape.byte_lens) + 3))
    if kind == "range" and shape.ints and shape.steps:
        return _ranges(shape)
    if kind == "dict":
        return _dicts(shape)
    if kind in _ELEMENT_KINDS:
        return _container(kind, shape)
    return None


def from_shape(shape: Shape) -> Strategy | None:
    """A strategy for values like the observed ones (None when nothing can be generated)."""
    parts = [_for_kind(kind, shape) for kind in sorted(shape.kinds)]
    usable = [p for p in parts if p is not None]
    return st.one_of(*usable) if usable else None


# ---------------------------------------------------------------- type hints

_SMALL: dict[str, Strategy] = {}


def _scalar(name: str) -> Strategy | None:
    if not _SMALL:
        _SMALL.update(
            {
                "int": st.integers(-20, 100),
                "float": st.integers(-160, 800).map(lambda k: k / 8),
                "str": st.text(alphabet=st.sampled_from("abcxyz ABC012-_.,"), max_size=12),
                "bytes": st.binary(max_size=12),
                "bool": st.booleans(),
                "None": st.none(),
            }
        )
    return _SMALL.get(name)


_SEQUENCES = {"list", "List", "Sequence", "Iterable", "Collection", "MutableSequence"}
_SETS = {"set", "Set", "AbstractSet", "MutableSet", "frozenset", "FrozenSet"}
_DICTS = {"dict", "Dict", "Mapping", "MutableMapping"}


def from_hint(node: ast.expr | None, depth: int = 0) -> Strategy | None:
    """A strategy for a builtin-only annotation; None for anything else (a repo class, Any ...)."""
    if node is None or depth > 6:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return from_hint(parse_expression(node.value), depth + 1)
        except SyntaxError:
            return None
    if isinstance(node, ast.Constant) and node.value is None:
        return st.none()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([node.left, node.right], depth)
    name = _name(node.value if isinstance(node, ast.Subscript) else node)
    if not isinstance(node, ast.Subscript):
        return _scalar(name) if name else None
    args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    return _generic(name, args, depth)


def _generic(name: str | None, args: list[ast.expr], depth: int) -> Strategy | None:
    if name == "Optional":
        return _union([*args, ast.Constant(None)], depth)
    if name == "Union":
        return _union(args, depth)
    found = [from_hint(a, depth + 1) for a in args if not _is_ellipsis(a)]
    parts = [p for p in found if p is not None]
    if len(parts) != len(found) or not parts:
        return None
    if name in _SEQUENCES:
        return st.lists(parts[0], max_size=8)
    if name in _SETS:
        return st.sets(parts[0], max_size=8)
    if name in ("tuple", "Tuple"):
        if any(_is_ellipsis(a) for a in args):
            return st.lists(parts[0], max_size=8).map(tuple)
        return st.tuples(*parts)
    if name in _DICTS and len(parts) == 2:
        return st.dictionaries(parts[0], parts[1], max_size=6)
    return None


def _union(nodes: list[ast.expr], depth: int) -> Strategy | None:
    found = [from_hint(n, depth + 1) for n in nodes]
    parts = [p for p in found if p is not None]
    return st.one_of(*parts) if len(parts) == len(found) else None


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


# ---------------------------------------------------------------- drawing


def draw(strategy: Strategy, count: int, seed: int) -> list[Any]:
    """About `count` values (some may repeat), the same ones on every run: hypothesis seeded
    with `seed`, derandomised, no example database, generation phase only.  Every draw runs on
    one long-lived thread (`_drawer`): hypothesis sets up its random state once per thread it
    runs in, with a full garbage collection, and gen's worker threads come and go."""
    return _drawer().submit(_draw_here, strategy, count, seed).result()


def _draw_here(strategy: Strategy, count: int, seed: int) -> list[Any]:
    out: list[Any] = []
    per_example = max(1, -(-count // 3))

    @hypothesis_seed(seed)
    @settings(
        derandomize=True,
        database=None,
        max_examples=4,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(strategy, min_size=per_example, max_size=per_example))
    def collect(values: list[Any]) -> None:
        out.extend(values)

    # a shape nothing satisfies (seen on idna) draws no values, where hypothesis would raise and
    # end the whole gen; the lock: the parsers elsewhere (hypothesis parses too)
    with PARSE_LOCK, _no_local_constants(), contextlib.suppress(Unsatisfiable):
        collect()
    return out


_DRAWER: list[ThreadPoolExecutor] = []
_DRAWER_LOCK = threading.Lock()


def _drawer() -> ThreadPoolExecutor:
    with _DRAWER_LOCK:
        if not _DRAWER:
            _DRAWER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="replicate-draw"))
        return _DRAWER[0]


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Hypothesis (>= 6.131) mixes in literals harvested from the "local" modules loaded at the
    moment (ours, the repository's): which ones depends on import order and threads, so the
    drawn values would differ between two mints of the same commit. Draw without them."""
    original = getattr(_providers, "_get_local_constants", None)
    cache = getattr(_providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:
        yield
        return
    empty = _providers.Constants()
    _providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        _providers._get_local_constants = original
        cache.cache.clear()
