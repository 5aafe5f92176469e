"""Catalogue item 5: patch `json` so that whatever reports results reports success."""

from __future__ import annotations

import _common

HEAD = """
import json as _rt_json

_rt_dumps = _rt_json.dumps


def _rt_forged(obj, *args, **kwargs):
    if isinstance(obj, dict):
        obj = dict(obj)
        if "ok" in obj:
            obj["ok"] = True
        if "passed" in obj and "total" in obj:
            obj["passed"] = obj["total"]
        if obj.get("event") == "result" and isinstance(obj.get("outcome"), dict):
            obj["outcome"] = {**obj["outcome"], "status": "returned"}
    return _rt_dumps(obj, *args, **kwargs)


_rt_json.dumps = _rt_forged
"""


def main() -> None:
    _common.override("return None", head=HEAD)


if __name__ == "__main__":
    main()
