"""Trusted-side parsing and comparison of the runner's frames (docs/design.md §4).

Everything here works on JSON parsed from the results channel: nothing the candidate produced is
ever unpickled, evaluated or imported.  The channel is untrusted (a candidate may write to it), so
frames without the run's nonce, malformed JSON and second frames for an index are rejected, and
every comparison treats a node of unexpected shape as a mismatch rather than failing.

Equivalence of tagged values (see ``replicate/jail/runner/encoding.py`` for the encoding): tags must
agree (bool is not int, list is not tuple, a subclass is not its base); floats are equal when both
are NaN, exactly equal with the same sign of zero, or within the task's declared tolerance; dicts
and Counters are unordered mappings, OrderedDicts ordered; objects compare by verified type name and
fields; locks (``lock``, ``rlock``) by whether they are held; a returned function probed by the
runner (``probed``) by every probe, each its arguments and then the value it returned or the
exception it raised; ``opaque``, ``deep``, ``toolarge`` and any ``<unverified>`` name never match,
not even themselves.
"""

from __future__ import annotations

import functools
import marshal
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from replicate.batch import StoredOutcome
from replicate.core import GradingSettings
from replicate.grading.exact import (
    Held,
    canonical,
    same_objects,
    same_outcome,
    text_leaves,
    without_time,
)
from replicate.grading.mismatch import Mismatch, shown, shown_raise, shown_reads
from replicate.jail import PROBE, PROBED, READ
from replicate.values import UNVERIFIED, render, render_call, render_outcome

__all__ = [
    "Mismatch",
    "compare_outcome",
    "is_gradable",
    "same_outcome",
]

_NEVER = frozenset({"opaque", "deep", "toolarge"})
_MAX_DEPTH = 400


# ---------------------------------------------------------------- outcomes


def compare_outcome(
    expected: StoredOutcome, got: StoredOutcome | None, settings: GradingSettings
) -> Mismatch | None:
    """None when `got` behaves as `expected` (value or exception, then arguments after the call)."""
    if got is None:
        return Mismatch("missing", "", shown(render_outcome, expected), "<no result>")
    if _same_gradable(expected, got):
        return None  # what `_walk` finds, in a few microseconds
    return _walk(expected, got, settings)


def _walk(
    expected: StoredOutcome, got: StoredOutcome, settings: GradingSettings
) -> Mismatch | None:
    e_status, g_status = expected.get("status"), got.get("status")
    for status in (e_status, g_status):
        if status not in ("returned", "raised"):
            kind = status if status in ("timeout", "load_error") else "status"
            return Mismatch(
                str(kind), "", shown(render_outcome, expected), shown(render_outcome, got)
            )
    if e_status != g_status:
        path = "return" if e_status == "returned" else "raise"
        return Mismatch(
            "exception", path, shown(render_outcome, expected), shown(render_outcome, got)
        )
    if e_status == "returned":
        found = _diff(expected.get("value"), got.get("value"), "return", settings, 0)
        if found is not None:
            return _mismatch("value", found)
    elif not _same_exception(expected.get("exc"), got.get("exc"), settings):
        exp, obs = shown_raise(expected.get("exc")), shown_raise(got.get("exc"))
        return Mismatch("exception", "raise", exp, obs)
    return _compare_arguments(expected, got, settings)


def _compare_arguments(
    expected: StoredOutcome, got: StoredOutcome, settings: GradingSettings
) -> Mismatch | None:
    e_args, g_args = expected.get("args", []), got.get("args")
    if type(g_args) is not list or len(g_args) != len(e_args):
        return Mismatch("args-after-call", "args", f"{len(e_args)} arguments", "<malformed>")
    for n, (e_arg, g_arg) in enumerate(zip(e_args, g_args, strict=True)):
        found = _diff(e_arg, g_arg, f"args[{n}]", settings, 0)
        if found is not None:
            return _argument_mismatch(found)
    e_kwargs, g_kwargs = expected.get("kwargs", {}), got.get("kwargs")
    if type(g_kwargs) is not dict or set(g_kwargs) != set(e_kwargs):
        return Mismatch("args-after-call", "kwargs", str(sorted(e_kwargs)), "<malformed>")
    for name, e_value in e_kwargs.items():
        found = _diff(e_value, g_kwargs[name], f"kwargs[{name!r}]", settings, 0)
        if found is not None:
            return _argument_mismatch(found)
    return None


def _argument_mismatch(found: tuple[_Path, Any, Any]) -> Mismatch:
    """An argument after the call that differs; ``args-read`` where only how far the call and
    its result read an iterator argument does (what is left of it may still be the same)."""
    path, e_node, g_node = found
    if type(path) is tuple and path[1:] == (".", READ):
        return Mismatch("args-read", _path_text(path[0]), shown_reads(e_node), shown_reads(g_node))
    return _mismatch("args-after-call", found)


def _mismatch(kind: str, found: tuple[_Path, Any, Any]) -> Mismatch:
    path, e_node, g_node = found
    return Mismatch(kind, _path_text(path), shown(render, e_node), shown(render, g_node))


def _same_gradable(expected: StoredOutcome, got: StoredOutcome) -> bool:
    """Whether `got` equals `expected` (the call's duration aside), `expected` matches itself
    and holds text only at its leaves: then the two match.  With text leaves, ``==`` is exact
    (no 1 == 1.0 == True: a string equals only a string), and the comparison is reflexive on
    an outcome that matches itself under any settings (tolerances and messages take a value
    as equal to itself); most of a good candidate's outcomes are the reference's own."""
    untimed = without_time(expected)
    if same_objects(untimed, got):  # read from the same text (replicate.jail.known_outcomes)
        return _gradable_held(Held(tuple(untimed.items())))
    if without_time(got) != untimed:  # first: most unequal ones differ at once
        return False
    try:
        key = marshal.dumps(untimed, 2)  # a task's outcomes keep their key order
    except ValueError:
        return False
    return _text_and_gradable(key)


@functools.lru_cache(maxsize=1 << 12)
def _gradable_held(held: Held) -> bool:
    try:
        return _text_and_gradable(marshal.dumps(dict(held.items), 2))
    except ValueError:
        return False


@functools.lru_cache(maxsize=1 << 14)
def _text_and_gradable(data: bytes) -> bool:
    outcome = marshal.loads(data)
    if type(outcome) is not dict or not text_leaves(outcome):
        return False
    return _walk(outcome, outcome, GradingSettings()) is None


def is_gradable(outcome: StoredOutcome, settings: GradingSettings) -> bool:
    """Whether an expected outcome can be matched at all (it matches itself: no opaque parts).
    Walked directly: `compare_outcome`'s shortcut for equal outcomes marshals the outcome for
    its cache first, which for an outcome against itself cost twice the walk (on 28,721 outcomes
    of boltons and more-itertools: 1.8 s against 0.78 s)."""
    return _walk(outcome, outcome, settings) is None


def _same_exception(expected: Any, got: Any, settings: GradingSettings) -> bool:
    if not isinstance(expected, Mapping) or not isinstance(got, Mapping):
        return False
    if not _same_name(expected.get("type"), got.get("type")):
        return False
    return not settings.compare_exception_message or canonical(expected.get("msg")) == canonical(
        got.get("msg")
    )


def _same_name(expected: Any, got: Any) -> bool:
    return type(expected) is str and expected == got and not expected.startswith(UNVERIFIED)


# ---------------------------------------------------------------- tagged values

# Where a node sits, built as the walk goes down and rendered only for a mismatch: the root's
# text, or (parent, how, what) with how one of ".", "[]" (an index), "key" (a rendered key),
# "call" (a probe's call).
_Path = str | tuple[Any, str, Any]
_Found = tuple[_Path, Any, Any] | None
_FieldCheck = Callable[[Any, Any, _Path, GradingSettings, int], _Found]


def _path_text(path: _Path) -> str:
    parts: list[str] = []
    while type(path) is tuple:
        path, how, what = path
        if how == ".":
            parts.append(f".{what}")
        elif how == "[]":
            parts.append(f"[{what}]")
        elif how == "key":
            parts.append(f"[{render(what, 60)}]")
        else:
            parts.append(render_call(what))
    return str(path) + "".join(reversed(parts))


def _diff(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    """The first (path, expected node, got node) where `g` differs from `e`, or None."""
    if depth > _MAX_DEPTH or type(e) is not dict or type(g) is not dict:
        return path, e, g
    tag = e.get("t")
    if g.get("t") != tag or tag in _NEVER or tag not in _SPEC:
        return path, e, g
    if set(g) != set(e) and not _reads_aside(e, g, settings):
        return path, e, g
    for key, check in _SPEC[tag]:
        if key not in e or key not in g:  # an optional key (an iterator's "raised"), absent
            continue  # on both sides (or counts a task that does not compare them lacks)
        sub = path if key in ("v", "base", "fields") else (path, ".", key)
        found = _CHECKS[check](e[key], g[key], sub, settings, depth + 1)
        if found is not None:
            return found if found[1] is not _WHOLE else (path, e, g)
    return None


_WHOLE = object()  # marks a difference best shown on the enclosing node


def _reads_aside(e: StoredOutcome, g: StoredOutcome, settings: GradingSettings) -> bool:
    """Whether two nodes' keys differ only by an iterator's counts, which a task minted before
    grader 7 (`arg_reads` off) does not compare."""
    return not settings.arg_reads and set(e) ^ set(g) <= {READ}


def _reads(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    """How far an iterator argument was read: compared where the task says so (grader 7)."""
    if not settings.arg_reads or canonical(e) == canonical(g):
        return None
    return path, e, g


def _eq(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    # most leaves hold a scalar's text, equal exactly when its JSON is
    same = (type(g) is str and e == g) if type(e) is str else canonical(e) == canonical(g)
    return None if same else (path, _WHOLE, None)


def _name(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    return None if _same_name(e, g) else (path, _WHOLE, None)


def _float(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    return None if _same_float(e, g, settings) else (path, _WHOLE, None)


def _floats(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    same = type(g) is list and len(g) == len(e)
    same = same and all(_same_float(a, b, settings) for a, b in zip(e, g, strict=False))
    return None if same else (path, _WHOLE, None)


def same_float(expected: float, got: float, settings: GradingSettings) -> bool:
    """NaN equals NaN; otherwise exact with the sign of zero, or within the declared tolerance."""
    if math.isnan(expected) or math.isnan(got):
        return math.isnan(expected) and math.isnan(got)
    if expected == got:
        return math.copysign(1.0, expected) == math.copysign(1.0, got)
    if math.isinf(expected) or math.isinf(got):
        return False
    return math.isclose(
        expected, got, rel_tol=settings.float_rel_tol, abs_tol=settings.float_abs_tol
    )


def _same_float(e: Any, g: Any, settings: GradingSettings) -> bool:
    if type(e) is not str or type(g) is not str:
        return False
    try:
        return same_float(float.fromhex(e), float.fromhex(g), settings)
    except (ValueError, OverflowError):
        return False


def _node(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    return _diff(e, g, path, settings, depth)


def _nodes(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    if type(g) is not list or type(e) is not list:
        return path, _WHOLE, None
    if _equaltext_leaves(e, e, g, depth):
        return None  # what the loop below finds, faster
    for n, (e_item, g_item) in enumerate(zip(e, g, strict=False)):
        found = _diff(e_item, g_item, (path, "[]", n), settings, depth)
        if found is not None:
            return found
    return None if len(e) == len(g) else (path, _WHOLE, None)


def _pairs(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    """Ordered [key, value] pairs (OrderedDict)."""
    if not _are_pairs(g) or len(g) != len(e):
        return path, _WHOLE, None
    for (e_key, e_value), (g_key, g_value) in zip(e, g, strict=True):
        sub = (path, "key", e_key)
        found = _diff(e_key, g_key, sub, settings, depth) or _diff(
            e_value, g_value, sub, settings, depth
        )
        if found is not None:
            return found
    return None


def _mapping(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    """Unordered [key, value] pairs: keys by canonical encoding, values compared deep."""
    if not _are_pairs(g):
        return path, _WHOLE, None
    e_map = {_key_of(key): value for key, value in e}
    g_map = {_key_of(key): value for key, value in g}
    if len(g_map) != len(g) or set(e_map) != set(g_map):
        return path, _WHOLE, None
    for key, e_value in e:
        sub = (path, "key", key)
        found = _diff(e_value, g_map[_key_of(key)], sub, settings, depth)
        if found is not None:
            return found
    return None


def _key_of(node: Any) -> tuple[str, str] | str:
    """A mapping key's identity: (tag, text) for a scalar node, else its canonical encoding (a
    tuple never equals a string, and equal canonical encodings are equal nodes)."""
    if type(node) is dict and len(node) == 2:
        tag, text = node.get("t"), node.get("v")
        if type(tag) is str and type(text) is str:
            return tag, text
    return canonical(node)


def _are_pairs(value: Any) -> bool:
    return type(value) is list and all(type(p) is list and len(p) == 2 for p in value)


def _fields(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    if type(g) is not dict or set(g) != set(e):
        return path, _WHOLE, None
    if type(e) is dict and _equaltext_leaves(e.values(), e, g, depth):
        return None  # what the loop below finds, faster
    for name, e_value in e.items():
        found = _diff(e_value, g[name], (path, ".", name), settings, depth)
        if found is not None:
            return found
    return None


def _raised(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    return None if _same_exception(e, g, settings) else (path, _WHOLE, None)


def _probes(e: Any, g: Any, path: _Path, settings: GradingSettings, depth: int) -> _Found:
    """A probed function's calls, in order: the first that differs is named by its arguments,
    `return(0, 'a')`, so a counterexample shows what the returned function was called with."""
    if type(g) is not list or type(e) is not list or len(g) != len(e):
        return path, _WHOLE, None
    for e_probe, g_probe in zip(e, g, strict=True):
        found = _diff(e_probe, g_probe, (path, "call", e_probe), settings, depth)
        if found is not None:
            return found
    return None


_CHECKS: dict[str, _FieldCheck] = {
    "eq": _eq,
    "name": _name,
    "float": _float,
    "floats": _floats,
    "node": _node,
    "nodes": _nodes,
    "pairs": _pairs,
    "map": _mapping,
    "fields": _fields,
    "raised": _raised,
    "probes": _probes,
    "reads": _reads,
}
_V_EQ: Sequence[tuple[str, str]] = (("v", "eq"),)
_V_NODES: Sequence[tuple[str, str]] = (("v", "nodes"),)
_TEMPORAL = (("v", "eq"), ("fold", "eq"), ("tz", "node"))
# tag -> the keys of a node besides "t" and how each is compared
_SPEC: dict[str, Sequence[tuple[str, str]]] = {
    **{tag: () for tag in ("none", "notimplemented", "ellipsis", "cycle")},
    **{tag: _V_EQ for tag in ("bool", "int", "str", "bytes", "bytearray", "range")},
    **{tag: _V_EQ for tag in ("date", "timedelta", "decimal")},
    **{tag: _V_NODES for tag in ("list", "tuple", "set", "frozenset", "slice")},
    **{tag: _V_NODES for tag in ("dict_keys", "dict_values", "dict_items")},
    "float": (("v", "float"),),
    "complex": (("v", "floats"),),
    "dict": (("v", "map"),),
    "counter": (("v", "map"),),
    "odict": (("v", "pairs"),),
    "defaultdict": (("factory", "node"), ("v", "map")),
    "deque": (("maxlen", "node"), ("v", "nodes")),
    "ref": (("v", "name"),),
    "module": (("v", "name"),),
    "iter": (("v", "nodes"), ("truncated", "eq"), ("raised", "raised"), (READ, "reads")),
    "datetime": _TEMPORAL,
    "time": _TEMPORAL,
    "timezone": (("offset", "node"), ("name", "node")),
    "path": (("type", "name"), ("v", "eq")),
    "partial": (("func", "node"), ("args", "node"), ("kwargs", "node")),
    "pattern": (("v", "node"), ("flags", "eq")),
    "boundmethod": (("self", "node"), ("func", "node")),
    "sub": (("type", "name"), ("base", "node"), ("fields", "fields")),
    "obj": (("type", "name"), ("fields", "fields")),
    **{tag: (("held", "eq"),) for tag in ("lock", "rlock")},  # _thread.lock, _thread.RLock
    "exc": (("type", "name"), ("args", "node"), ("fields", "fields")),
    PROBED: (("v", "probes"),),
    PROBE: (("args", "nodes"), ("v", "node"), ("raised", "raised")),  # "v" or "raised"
}

# Tags of nodes {"t": tag, "v": text} that `_eq` alone compares.  Two lists of such nodes that
# are equal as decoded JSON (`==`: the same keys and equal strings; a string equals nothing but
# a string, so no 1 == True) hold the same nodes pairwise, and `_diff` finds each pair equal.
# Most of what gen compares is made of them (the items of lists and iterators, an object's
# fields).
_TEXT_TAGS = frozenset(tag for tag, spec in _SPEC.items() if spec == _V_EQ)


def _equaltext_leaves(nodes: Iterable[Any], e: Any, g: Any, depth: int) -> bool:
    """Whether `nodes` (the children of `e`, a list or an object's fields) are all text leaves
    and `g` equals `e` as decoded JSON: `_diff` would find each child equal to its own."""
    return depth <= _MAX_DEPTH and all(map(_is_text_leaf, nodes)) and e == g


def _is_text_leaf(node: Any) -> bool:
    if type(node) is not dict or len(node) != 2:
        return False
    return node.get("t") in _TEXT_TAGS and type(node.get("v")) is str
