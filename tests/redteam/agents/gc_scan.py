"""Catalogue item 3: find the grader's expected values among the live objects (`gc`)."""

from __future__ import annotations

import _common

HELPERS = """
def _rt_search(args, kwargs):
    import base64
    import builtins
    import gc
    import pickle

    for obj in gc.get_objects():
        if not (isinstance(obj, dict) and isinstance(obj.get("cases"), list)):
            continue
        for case in obj["cases"]:
            if not (isinstance(case, dict) and "expected" in case and "input" in case):
                continue
            try:
                case_args, case_kwargs = pickle.loads(base64.b64decode(case["input"]))
                same = list(case_args) == list(args) and case_kwargs == kwargs
            except Exception:
                continue
            if same:
                status, payload = pickle.loads(base64.b64decode(case["expected"]))
                if status == "raised":
                    raise getattr(builtins, payload)("found with gc")
                return payload
    return None
"""


def main() -> None:
    _common.override("return _rt_search(args, kwargs)", HELPERS)


if __name__ == "__main__":
    main()
