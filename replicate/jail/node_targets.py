"""Where the Node runner finds an extracted JavaScript target (`Target` to `NodeTarget`), read
statically from the target's file: a function declaration through its module-scope binding
(exported or not: the runner and the recorder reach both); a function bound by `const`/`let`
(which the recorder cannot re-bind) and a method or static method through the export of the
binding or its class (the recorder wraps exports after the module ran).

An export is found by a few plain patterns of CommonJS and ES module exports; a name none of
them matches (kept private, or exported in a way not read here) gives None, and the caller
drops the target with its reason.
"""

from __future__ import annotations

import re

from replicate.core import Target
from replicate.jail.node import CallKind, NodeTarget

_NAME = re.compile(r"[A-Za-z_$][\w$]*\Z")
_BOUND = re.compile(r"(?:export\s+)?(?:const|let)\s")  # a binding the recorder cannot re-bind


def node_target(target: Target, source: bytes) -> NodeTarget | None:
    """How the runner calls `target` of a file holding `source`; None when it cannot."""
    text = source.decode("utf-8", errors="replace")
    if target.kind == "function":
        if not _NAME.match(target.qualname):
            return None
        if not _BOUND.match(target.signature):
            return NodeTarget(target.path, (), scope=target.qualname)
        export = export_path(text, target.qualname)
        return None if export is None else NodeTarget(target.path, export)
    if target.kind not in ("method", "staticmethod") or not target.class_name:
        return None
    owner, _, member = target.qualname.rpartition(".")
    if owner != target.class_name or not _NAME.match(owner):
        return None
    export = export_path(text, owner)
    if export is None:
        return None
    kind = CallKind.STATIC if target.kind == "staticmethod" else CallKind.METHOD
    return NodeTarget(target.path, export, kind, member)


def export_path(text: str, name: str) -> tuple[str, ...] | None:
    """The property path from a module's exports to the binding `name`: () for the exports
    themselves (`module.exports = name`), ("default",) for `export default class name`, (name,)
    for a named export; None when no pattern matches."""
    n = re.escape(name)
    whole = (rf"^\s*module\.exports\s*=\s*{n}\s*;?\s*$",)
    default = (rf"^\s*export\s+default\s+class\s+{n}\b", rf"^\s*export\s+default\s+{n}\s*;?\s*$")
    named = (
        rf"^\s*export\s+(?:class|const|let|var)\s+{n}\b",
        rf"^\s*(?:module\.)?exports\.{n}\s*=",
        rf"^\s*module\.exports\s*=\s*\{{[^}}]*(?<![\w$:]){n}(?![\w$])\s*[,}}]",
        rf"^\s*export\s*\{{[^}}]*(?<![\w$]){n}\s*[,}}]",
    )
    for patterns, path in ((whole, ()), (default, ("default",)), (named, (name,))):
        if any(re.search(p, text, re.MULTILINE) for p in patterns):
            return path
    return None
