"""One job: import the target, load every input, call it on each, write the frames (a jail's
whole run, or a session child's)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from .base import (
    _DONE,
    _IMPORT_ERROR,
    _LOAD_TIMEOUT_S,
    _LOADED,
    _MSG_CAP,
    _READY,
    _STARTED,
    _TIMEOUT,
    EncodeLimits,
    _os_exit,
)
from .byvalue import _load_by_value
from .calling import _AlarmRegion, _armed, _call, _load, _timed
from .channel import _Channel
from .encoding import exception_record
from .importing import _target
from .preloading import _with_made_packages
from .replay import replay_work

if TYPE_CHECKING:
    from .base import wire

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


def run(job: wire.Job) -> None:
    """Run one parsed job, writing frames to its `channel_fd`; ends the process."""
    channel = _Channel(int(job.get("channel_fd", 3)), str(job["nonce"]))
    arg_items = job.get("max_arg_items")
    lim = EncodeLimits(
        int(job["max_items"]),
        int(job["max_depth"]),
        int(job["max_bytes"]),
        None if arg_items is None else int(arg_items),
        job.get("arg_reads") is True,
    )
    timeout = float(job["call_timeout_s"])
    load_timeout = max(timeout, _LOAD_TIMEOUT_S)
    encode_inputs = job.get("encode_inputs") is True
    inputs = [(int(item["i"]), str(item["pickle_b64"])) for item in job["inputs"]]
    module_name, qualname = str(job["module"]), str(job["qualname"])
    channel.send({"event": _STARTED})  # before any code of the repository runs
    if job.get("by_value") is True:
        _load_by_value()
    _with_made_packages()
    try:
        fn = _target(module_name, qualname)
    except BaseException as exc:  # noqa: BLE001 - whatever the import raises is the candidate's
        record = exception_record(exc)
        msg = record["msg"][:_MSG_CAP]
        channel.send({"event": _IMPORT_ERROR, "type": record["type"], "msg": msg})
        _os_exit(0)
    channel.send({"event": _READY})
    with _AlarmRegion():  # one region for all the loads: two mask calls, not two per input
        reported = lim.arguments() if encode_inputs else None
        loaded = [(i, _load_input(blob, load_timeout, reported)) for i, blob in inputs]
    channel.send({"event": _LOADED})  # the host times the first call from here
    pending = ""  # the results since the last call, written together with the next call frame
    first_timeout = job.get("until_timeout") is True
    for index, (item, shown) in loaded:
        if item["status"] == "loaded":
            work = replay_work(fn, item["args"], lim, shown is not None) or _call(
                fn, item["args"], item["kwargs"], lim, shown
            )
            channel.write(pending + channel.call(index))  # the host times the call from here
            pending = ""
            item = _timed(work, timeout)
        pending += channel.result(index, item)
        if first_timeout and item["status"] == _TIMEOUT:
            break  # a program of a series that loops costs one call's limit, not the run's
    channel.write(pending + channel.frame({"event": _DONE}))
    _os_exit(0)


def _load_input(
    blob: str, timeout: float, lim: EncodeLimits | None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """An input's arguments, and with `lim` (the inputs are to be reported) a second copy."""
    loaded = _armed(_load(blob), timeout)
    wanted = lim is not None and loaded["status"] == "loaded"
    shown = _armed(_load(blob, lim), timeout) if wanted else None
    return loaded, shown
