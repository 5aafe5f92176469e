"""Short Python-like renderings of the runner's tagged values, for counterexamples and feedback.

Pure and trusted-side: the input is JSON already parsed from the channel, possibly forged or
malformed; rendering never fails (a broken node renders as ``<malformed>``) and stops early once
the output passes its limit, so a huge value costs no more than a small one.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

UNVERIFIED = "<unverified>"


class _Full(Exception):
    """The rendering reached its limit."""


class _Out:
    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.left = limit

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.left -= len(text)
        if self.left < 0:
            raise _Full()


def render(tagged: Any, limit: int = 200) -> str:
    """A Python-like rendering of one tagged value, cut to about `limit` characters."""
    out = _Out(limit)
    try:
        _node(tagged, out)
    except _Full:
        return "".join(out.parts)[:limit] + "..."
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        return "<malformed>"
    return "".join(out.parts)


def render_outcome(outcome: Mapping[str, Any] | None, limit: int = 200) -> str:
    """One line for a call's outcome: the value, `raise T('msg')`, a timeout or a load error."""
    if outcome is None:
        return "<no result>"
    status = outcome.get("status")
    if status == "returned":
        return render(outcome.get("value"), limit)
    if status == "raised":
        return "raise " + render_exception(outcome.get("exc"), limit)
    if status == "timeout":
        return f"<timeout after {outcome.get('t')}s>"
    if status == "load_error":
        return f"<input failed to load: {str(outcome.get('msg'))[:limit]}>"
    return f"<{str(status)[:40]}>"


def render_exception(exc: Any, limit: int = 200) -> str:
    """`ValueError('bad')` from an exception record `{"type", "msg"}`."""
    if not isinstance(exc, Mapping):
        return "<malformed>"
    text = f"{short_name(exc.get('type'))}({str(exc.get('msg'))!r})"
    return text if len(text) <= limit else text[:limit] + "..."


def render_call(probe: Any, limit: int = 80) -> str:
    """`(0, 'a')`: the arguments a probe of a returned function called it with."""
    args = probe.get("args") if isinstance(probe, Mapping) else None
    if type(args) is not list:
        return "(<malformed>)"
    return "(" + ", ".join(render(arg, limit) for arg in args) + ")"


# How the jail's runner names a function or class an input rebuilt by value:
# `<by value>module.qualname#k` (its BY_VALUE_PREFIX; k tells apart two of one name).
BY_VALUE = "<by value>"


def short_name(name: Any) -> str:
    """`ValueError` for `builtins.ValueError`, `Cls` for `pkg.mod.Cls`, `double` for a test's
    helper rebuilt by value; lookalikes stay marked."""
    if not isinstance(name, str):
        return "<malformed>"
    if name.startswith(UNVERIFIED):
        return name
    short = name.removeprefix("builtins.").rsplit(".", 1)[-1]
    return short.split("#", 1)[0] if name.startswith(BY_VALUE) else short


def _node(node: Any, out: _Out) -> None:
    tag = node["t"]
    if tag in _SIMPLE:
        out.add(_SIMPLE[tag](node))
    else:
        _COMPOSITE[tag](node, out)


def _float(text: Any) -> str:
    return repr(float.fromhex(text))


def _seq(nodes: Any, out: _Out, open_: str, close: str, trailing_comma: bool = False) -> None:
    out.add(open_)
    for n, item in enumerate(nodes):
        if n:
            out.add(", ")
        _node(item, out)
    if trailing_comma and len(nodes) == 1:
        out.add(",")
    out.add(close)


def _pairs(pairs: Any, out: _Out, open_: str = "{", close: str = "}") -> None:
    out.add(open_)
    for n, (key, value) in enumerate(pairs):
        if n:
            out.add(", ")
        _node(key, out)
        out.add(": ")
        _node(value, out)
    out.add(close)


def _fields(node: Any, out: _Out) -> None:
    fields = node["fields"]
    if "_name_" in fields and "__objclass__" in fields:  # an enum member
        out.add(f"{short_name(node['type'])}.{render(fields['_name_'])[1:-1]}")
        return
    out.add(short_name(node["type"]) + "(")
    for n, (name, value) in enumerate(fields.items()):
        out.add((", " if n else "") + f"{name}=")
        _node(value, out)
    out.add(")")


def _wrapped(prefix: str, inner: Callable[[Any, _Out], None]) -> Callable[[Any, _Out], None]:
    def draw(node: Any, out: _Out) -> None:
        out.add(prefix + "(")
        inner(node, out)
        out.add(")")

    return draw


def _set(node: Any, out: _Out) -> None:
    if not node["v"]:
        out.add("set()" if node["t"] == "set" else "frozenset()")
    elif node["t"] == "set":
        _seq(node["v"], out, "{", "}")
    else:
        _seq(node["v"], out, "frozenset({", "})")


def _iter(node: Any, out: _Out) -> None:
    _seq(node["v"], out, "<generator: [", "")
    if node.get("truncated"):
        out.add(", ..." if node["v"] else "...")
    out.add("]")
    if "raised" in node:
        out.add(" then raise " + render_exception(node["raised"]))
    out.add(">")


def _sub(node: Any, out: _Out) -> None:
    if "_name_" in node["fields"] and "__objclass__" in node["fields"]:
        _fields(node, out)
        return
    out.add(short_name(node["type"]) + "(")
    _node(node["base"], out)
    out.add(")")


def _exc(node: Any, out: _Out) -> None:
    out.add(short_name(node["type"]))
    _seq(node["args"]["v"], out, "(", ")")


def _temporal(node: Any, out: _Out) -> None:
    out.add(f"{node['t']}({node['v']}")
    if node["tz"]["t"] != "none":
        out.add(", tz=")
        _node(node["tz"], out)
    out.add(")")


def _labelled(label: str, *keys: str) -> Callable[[Any, _Out], None]:
    def draw(node: Any, out: _Out) -> None:
        out.add(label + "(")
        for n, key in enumerate(keys):
            out.add(", " if n else "")
            _node(node[key], out)
        out.add(")")

    return draw


def _probe(node: Any, out: _Out) -> None:
    """What one probe of a returned function gave (its arguments are in the path)."""
    if "raised" in node:
        out.add("raise " + render_exception(node["raised"]))
    else:
        _node(node["v"], out)


def _defaultdict(node: Any, out: _Out) -> None:
    out.add("defaultdict(")
    _node(node["factory"], out)
    _pairs(node["v"], out, ", {", "})")


def _bytes(node: Any) -> str:
    try:
        data = base64.b64decode(node["v"], validate=True)
    except binascii.Error:
        return "<malformed>"
    return repr(data) if node["t"] == "bytes" else f"bytearray({data!r})"


def _range(node: Any) -> str:
    start, stop, step = node["v"]
    return f"range({start}, {stop})" if step == "1" else f"range({start}, {stop}, {step})"


def _lock(node: Any, name: str) -> str:
    """`<locked _thread.RLock>`, as Python's repr begins."""
    return f"<{'locked' if node['held'] is True else 'unlocked'} {name}>"


_SIMPLE: dict[str, Callable[[Any], str]] = {
    "none": lambda n: "None",
    "bool": lambda n: "True" if n["v"] is True else "False",
    "int": lambda n: str(n["v"]),
    "float": lambda n: _float(n["v"]),
    "complex": lambda n: repr(complex(float.fromhex(n["v"][0]), float.fromhex(n["v"][1]))),
    "str": lambda n: repr(str(n["v"])[:10_000]),
    "bytes": _bytes,
    "bytearray": _bytes,
    "range": _range,
    "notimplemented": lambda n: "NotImplemented",
    "ellipsis": lambda n: "Ellipsis",
    "ref": lambda n: short_name(n["v"]),
    "module": lambda n: f"<module {n['v']!r}>",
    "date": lambda n: f"date({n['v']})",
    "timedelta": lambda n: "timedelta(days={}, seconds={}, microseconds={})".format(*n["v"]),
    "decimal": lambda n: f"Decimal({n['v']!r})",
    "path": lambda n: f"{short_name(n['type'])}({n['v']!r})",
    "opaque": lambda n: f"<opaque {short_name(n.get('type'))}>",
    "deep": lambda n: "<...>",
    "cycle": lambda n: "<cycle>",
    "toolarge": lambda n: "<too large>",
    "lock": lambda n: _lock(n, "_thread.lock"),
    "rlock": lambda n: _lock(n, "_thread.RLock"),
    "probed": lambda n: f"<function: {len(n['v'])} probes>",
    "same": lambda n: f"<the same object as {n['v']}>",  # an argument passed twice (wire.SAME)
}
_COMPOSITE: dict[str, Callable[[Any, _Out], None]] = {
    "list": lambda n, out: _seq(n["v"], out, "[", "]"),
    "tuple": lambda n, out: _seq(n["v"], out, "(", ")", trailing_comma=True),
    "set": _set,
    "frozenset": _set,
    "dict": lambda n, out: _pairs(n["v"], out),
    "odict": lambda n, out: _pairs(n["v"], out, "OrderedDict({", "})"),
    "counter": lambda n, out: _pairs(n["v"], out, "Counter({", "})"),
    "defaultdict": _defaultdict,
    "deque": lambda n, out: _seq(n["v"], out, "deque([", "])"),
    "slice": lambda n, out: _seq(n["v"], out, "slice(", ")"),
    "dict_keys": lambda n, out: _seq(n["v"], out, "dict_keys([", "])"),
    "dict_values": lambda n, out: _seq(n["v"], out, "dict_values([", "])"),
    "dict_items": lambda n, out: _seq(n["v"], out, "dict_items([", "])"),
    "iter": _iter,
    "datetime": _temporal,
    "time": _temporal,
    "timezone": _wrapped("timezone", lambda n, out: _node(n["offset"], out)),
    "partial": _labelled("partial", "func", "args", "kwargs"),
    "pattern": _labelled("re.compile", "v"),
    "boundmethod": _labelled("<bound method>", "func", "self"),
    "sub": _sub,
    "obj": _fields,
    "exc": _exc,
    "probe": _probe,
}
