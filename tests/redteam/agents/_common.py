"""Shared by the red-team agents: the agent protocol's variables and ways to rewrite the target.

Every agent is a script run as `python agents/<name>.py [ARGS...] MARKER` inside the task's
workspace (standard library only).  MARKER, the last argument, names every process the attack
starts (so the test can look for leftovers in /proc) and is written into every candidate, whose
processes rename themselves after it with prctl(PR_SET_NAME).

Cheating candidates keep the stubbed file whole and append code at its end that rebinds the
target (a module-level name, or the class attribute of a method), so the grader reads the whole
file, module-level statements included.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Any


def marker() -> str:
    return sys.argv[-1]


def args() -> list[str]:
    """The attack's own arguments (between the script and the marker)."""
    return sys.argv[1:-1]


def safe() -> bool:
    """Set by the test when it runs an attack outside any sandbox: keep bombs bounded."""
    return os.environ.get("REDTEAM_SAFE") == "1"


def workspace() -> Path:
    return Path(os.environ["REPLICATE_WORKSPACE"])


def target_file() -> Path:
    return workspace() / os.environ["REPLICATE_TARGET_FILE"]


def target_name() -> str:
    return os.environ["REPLICATE_TARGET"].rsplit(".", 1)[-1]


def module_name() -> str:
    """The dotted module of the target file, from its path under the workspace's src/ or root."""
    rel = Path(os.environ["REPLICATE_TARGET_FILE"]).with_suffix("")
    parts = rel.parts[1:] if rel.parts[0] == "src" else rel.parts
    return ".".join(parts)


def target_kind(source: str | None = None) -> tuple[str, str | None]:
    """("function" | "method" | "staticmethod" | "classmethod", class name or None); the class
    name dotted for a class nested in another (boltons' `FilePerms._FilePermProperty`)."""
    tree = ast.parse(source if source is not None else target_file().read_text("utf-8"))
    name = target_name()
    nested = _nested_kind(tree)
    if nested is not None:
        return nested
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return "function", None
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    decorators = {getattr(d, "id", "") for d in item.decorator_list}
                    for kind in ("staticmethod", "classmethod"):
                        if kind in decorators:
                            return kind, node.name
                    return "method", node.name
    raise SystemExit(f"target {name} not found in {target_file()}")


def _nested_kind(tree: ast.Module) -> tuple[str, str] | None:
    """The kind and dotted class of a method of a class nested in another, found by its
    qualified name; None for any other target."""
    module = module_name()
    symbol = os.environ["REPLICATE_TARGET"]
    if not symbol.startswith(module + "."):
        return None
    *classes, name = symbol[len(module) + 1 :].split(".")
    body: list[ast.stmt] = tree.body
    for cls in classes:
        found = [n for n in body if isinstance(n, ast.ClassDef) and n.name == cls]
        if not found:
            return None
        body = found[0].body
    if len(classes) < 2:
        return None
    for item in body:
        if isinstance(item, ast.FunctionDef) and item.name == name:
            decorators = {getattr(d, "id", "") for d in item.decorator_list}
            kind = next((k for k in ("staticmethod", "classmethod") if k in decorators), "method")
            return kind, ".".join(classes)
    return None


def prelude(mark: str) -> str:
    """Candidate code that names its process (and whatever it forks) after the marker."""
    return (
        "\n\ndef _rt_name_process():\n"
        "    try:\n"
        "        import ctypes\n"
        f"        ctypes.CDLL(None).prctl(15, {mark.encode()!r}, 0, 0, 0)\n"
        "    except Exception:\n"
        "        pass\n\n\n"
        "_rt_name_process()\n"
    )


def binding(kind: str, cls: str | None, fn: str) -> str:
    """The statement that makes `fn` the target."""
    if kind == "function":
        return f"{target_name()} = {fn}\n"
    wrap = {"staticmethod": "staticmethod", "classmethod": "classmethod"}.get(kind)
    value = f"{wrap}({fn})" if wrap else fn
    return f"{cls}.{target_name()} = {value}\n"


def override(body: str, helpers: str = "", *, head: str = "") -> None:
    """Append `helpers`, then `def _rt_cheat(*args, **kwargs)` with `body`, bound as the target.

    `head` is module-level code run at import, before the definitions.
    """
    kind, cls = target_kind()
    indented = "".join("    " + line + "\n" for line in body.strip("\n").splitlines())
    code = prelude(marker()) + head + "\n" + helpers + "\n\ndef _rt_cheat(*args, **kwargs):\n"
    code += indented + "\n\n" + binding(kind, cls, "_rt_cheat")
    append(code)


SLOW_HEAD = """
import time as _rt_slow_time

_rt_slow_calls = [0]
"""
SLOW_BODY = """
_rt_slow_calls[0] += 1
if _rt_slow_calls[0] <= {calls}:
    _rt_slow_time.sleep({seconds})
"""


def slow_first_calls(seconds: float, calls: int) -> tuple[str, str]:
    """Module-level code and a body prefix that sleep `seconds` on the first `calls` calls of the
    process only (0.5 s outside a sandbox), so the later calls answer fast."""
    return SLOW_HEAD, SLOW_BODY.format(calls=calls, seconds=0.5 if safe() else seconds)


def append(code: str) -> None:
    path = target_file()
    path.write_text(path.read_text("utf-8") + "\n" + code, encoding="utf-8")


ALWAYS_EQUAL = '''
class _RtAlwaysEqual:
    """Equal to everything, unequal to nothing."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__
'''


IS_ORIGINAL = """
def _rt_is_original(source, name):
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            body = [
                s
                for s in node.body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            ]
            return len(body) >= 2 or (len(body) == 1 and not isinstance(body[0], ast.Raise))
    return False
"""
_IS_ORIGINAL: dict[str, Any] = {}
exec(IS_ORIGINAL, _IS_ORIGINAL)


def is_original(source: str, name: str | None = None) -> bool:
    """Whether `source` defines the target (by name) with a real body, not the stub."""
    return bool(_IS_ORIGINAL["_rt_is_original"](source, name or target_name()))


def relative_target() -> str:
    """The target file's path inside its import root: `samplelib/numeric.py` for
    `src/samplelib/numeric.py`."""
    rel = os.environ["REPLICATE_TARGET_FILE"]
    return rel[4:] if rel.startswith("src/") else rel


def install(source: str) -> None:
    """Replace the target file with `source` (a found copy of the original file)."""
    path = target_file()
    if path.is_symlink():
        path.unlink()
    path.write_text(source, encoding="utf-8")


# A hidden input's call from its pickle: `(args, kwargs)`, or a recipe (a seed call's pickle with
# some arguments replaced), embedded in candidates that read hidden data
UNPACK_CALL = """
def _rt_call_of(data):
    import pickle

    loaded = pickle.loads(data)
    if type(loaded) is tuple and len(loaded) == 4 and loaded[0] == "replicate-recipe/1":
        _, seed, positional, keywords = loaded
        args, kwargs = pickle.loads(seed)
        args, kwargs = list(args), dict(kwargs)
        for position, value in positional.items():
            args[position] = value
        kwargs.update(keywords)
        return tuple(args), kwargs
    args, kwargs = loaded
    return tuple(args), dict(kwargs)
"""

# Decoding the grader's tagged values (for tables built from hidden data), embedded in candidates
DECODE_TAGGED = """
def _rt_decode(node):
    tag = node.get("t")
    if tag in ("int",):
        return int(node["v"])
    if tag == "float":
        return float.fromhex(node["v"])
    if tag in ("str", "bool"):
        return node["v"]
    if tag == "none":
        return None
    if tag in ("list", "tuple", "set", "frozenset"):
        items = [_rt_decode(x) for x in node["v"]]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict":
        return {_rt_decode(k): _rt_decode(v) for k, v in node["v"]}
    raise ValueError(tag)
"""

TABLE_LOOKUP = """
import builtins as _rt_builtins
key = repr((tuple(args), kwargs))
if key in _RT_TABLE:
    status, value = _RT_TABLE[key]
    if status == "raised":
        raise getattr(_rt_builtins, value)("from a lookup table")
    return value
return None
"""


def table_candidate(table: dict[str, tuple[str, object]]) -> None:
    """A candidate answering from `table` (repr((args, kwargs)) -> (status, value)) only."""
    override(TABLE_LOOKUP, f"_RT_TABLE = {table!r}\n")
