"""The channel: JSON text written without calling any object's own methods, and the
``<nonce> <json>`` frames on fd ``channel_fd``."""

from __future__ import annotations

import builtins
import json
import json.encoder
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .base import (
    _CALL_HEAD,
    _PID,
    _RESULT,
    _RUNNER_ERROR,
    _dict_items,
    _getpid,
    _int_repr,
    _json_str,
    _os_exit,
    _os_write,
    _type,
)

if TYPE_CHECKING:
    from .base import wire

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


def _no_default(obj: Any) -> Any:
    raise TypeError("not a JSON value of the runner's frames")


# json's C encoder, captured before any candidate code runs: compact separators, no circularity
# check (frames are trees the runner built), nothing but exact builtin types is accepted. Its text
# is the same as `_write`'s, which stays as the fallback where `_json` is not compiled in.
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _C_MAKE_ENCODER(None, _no_default, _json_str, None, ":", ",", False, False, True)
    if _C_MAKE_ENCODER is not None
    else None
)
_str_join = "".join


def _dumps(obj: Any) -> str:
    if _C_ENCODE is not None:
        return _str_join(_C_ENCODE(obj, 0))
    out: list[str] = []
    _write(obj, out)
    return _str_join(out)


def _write(obj: Any, out: list[str]) -> None:
    t = _type(obj)
    if t is str:
        out.append(_json_str(obj))
    elif obj is None or t is bool:
        out.append("null" if obj is None else ("true" if obj else "false"))
    elif t is int:
        out.append(_int_repr(obj))
    elif t is float:
        out.append(float.__repr__(obj))
    elif t is list:
        out.append("[")
        for n, item in enumerate(obj):
            if n:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif t is dict:  # with str keys: the only other shape this module builds
        out.append("{")
        for n, (key, value) in enumerate(_dict_items(obj)):
            out.append(("," if n else "") + _json_str(key) + ":")
            _write(value, out)
        out.append("}")
    else:
        _no_default(obj)


class _Channel:
    def __init__(self, fd: int, nonce: str) -> None:
        self.fd = fd
        self.prefix = nonce + " "

    def frame(self, frame: Mapping[str, Any]) -> str:
        return self.prefix + _dumps(frame) + "\n"

    def write(self, text: str) -> None:
        if _getpid() != _PID[0]:  # a forked child of the candidate never speaks for us
            _os_exit(0)
        data = text.encode("ascii")
        try:
            while data:
                data = data[_os_write(self.fd, data) :]
        except OSError:
            _os_exit(3)

    def send(self, frame: wire.Frame) -> None:
        self.write(self.frame(frame))

    def call(self, index: int) -> str:
        return self.prefix + _CALL_HEAD + _int_repr(index) + "}\n"

    def result(self, index: int, outcome: dict[str, Any]) -> str:
        """The frame of one input's outcome (written with the next call frame: one write)."""
        try:
            return self.frame({"event": _RESULT, "i": index, "outcome": outcome})
        except (RecursionError, MemoryError, TypeError, ValueError):
            outcome = {"status": _RUNNER_ERROR, "msg": "outcome could not be written"}
            return self.frame({"event": _RESULT, "i": index, "outcome": outcome})
