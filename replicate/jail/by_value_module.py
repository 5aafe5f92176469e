"""Callables carried by value: a lambda, a local function or a local class of the tests, passed
to a target, travels as its code and the values it closes over, not as a name to import.

The harvest pickles each call's arguments with the standard `pickle` first; only when that
fails (or names an object of a test module, which the jail would then import, with pytest, on
every run) does it try cloudpickle, which pickles by value what cannot be imported by name and
whatever the repository's test modules define. cloudpickle is one standard-library-
only module file, copied once into the cache (the installed one sits where a jail may not mount
it) with its bytecode beside it, its folder mounted read-only into the harvest's sandbox and
into every jail, and loaded there under the name `MODULE` (never `cloudpickle`, which a
repository may install in another version). Its pickles name their helpers by that module, so
the runner loads the file (before the candidate is imported) for a job whose inputs need it;
other jobs never pay for the import.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import importlib.util
import marshal
import os
from collections.abc import Iterable
from pathlib import Path

from replicate.cache import cache_root, publish
from replicate.jail import wire

MODULE = wire.BY_VALUE_MODULE
_MARK = MODULE.encode("ascii")


@functools.cache
def module_file() -> str | None:
    """cloudpickle's module file as shipped: the installed one (standard library only since
    cloudpickle 3) copied into the cache; None when it is missing, older (its module then
    imports a sibling: not one file) or the cache cannot be written."""
    source = _installed()
    if source is None:
        return None
    try:
        data = source.read_bytes()
        folder = cache_root() / "byvalue" / hashlib.sha256(data).hexdigest()[:20]
        target = folder / f"{MODULE}.py"
        if not target.is_file():
            publish(data, target)
        elif target.stat().st_mode & 0o444 != 0o444:
            os.chmod(target, 0o644)
    except OSError:
        return None
    _publish_bytecode(target, data)
    return str(target)


def _publish_bytecode(source: Path, data: bytes) -> None:
    """The module's bytecode in its ``__pycache__``, checked against the source's hash (so it
    holds wherever the folder is copied): a jail of its own then loads the module without
    compiling it (~10 ms a run).  Best effort: without it, the jail compiles the source."""
    final = Path(importlib.util.cache_from_source(str(source)))
    if final.is_file():
        return
    try:
        code = compile(data, str(source), "exec", dont_inherit=True)
        checked_hash = (0b11).to_bytes(4, "little")  # PEP 552: hash-based, checked
        header = importlib.util.MAGIC_NUMBER + checked_hash + importlib.util.source_hash(data)
        publish(header + marshal.dumps(code), final)
    except (OSError, SyntaxError, ValueError):
        return


def module_folder() -> str | None:
    """The folder a jail mounts to see the by-value module and its bytecode (`module_file`)."""
    found = module_file()
    return os.path.dirname(found) if found is not None else None


def _installed() -> Path | None:
    try:
        import cloudpickle
        from cloudpickle import cloudpickle as module
    except ImportError:
        return None
    major = str(getattr(cloudpickle, "__version__", "0")).split(".")[0]
    if not major.isdigit() or int(major) < 3 or not module.__file__:
        return None
    return Path(module.__file__)


def needs_module(pickles_b64: Iterable[str]) -> bool:
    """Whether any of these pickles (base64, a recipe holding its seed's bytes included) names
    the by-value module, so the runner must load it first."""
    for blob in pickles_b64:
        try:
            if _MARK in base64.b64decode(blob, validate=False):
                return True
        except (binascii.Error, ValueError):
            continue
    return False
