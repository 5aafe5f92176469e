"""Catalogue item 7, candidate side: at grade time, the candidate itself looks for a copy of the
original module (walking up from every path it can learn: its own file, sys.path, the mount
table, the home folder) and, when it finds one, runs it and takes the target from it."""

from __future__ import annotations

import _common

HELPERS = (
    _common.IS_ORIGINAL
    + """
def _rt_find_original(rel, name, budget=5.0):
    import os
    import time

    stop = time.monotonic() + budget
    starts = [os.path.abspath(p) for p in [__file__, *__import__("sys").path] if p]
    starts.append(os.path.expanduser("~"))  # checkouts in the home folder
    try:
        starts += [line.split()[4] for line in open("/proc/self/mountinfo")]
    except OSError:
        pass
    roots = set()
    for start in starts:
        here = start
        while here not in ("/", ""):
            roots.add(here)
            here = os.path.dirname(here)
    skip = (".git", "proc", "sys", "dev", "__pycache__", "site-packages", "dist-packages")
    for root in sorted(roots, key=len, reverse=True):
        for here, dirs, files in os.walk(root):
            if time.monotonic() > stop:
                return None
            dirs[:] = [d for d in dirs if d not in skip and here.count("/") < 12]
            path = os.path.join(here, os.path.basename(rel))
            if path.endswith(rel) and os.path.basename(rel) in files:
                try:
                    text = open(path, encoding="utf-8").read()
                except (OSError, UnicodeDecodeError):
                    continue
                if _rt_is_original(text, name):
                    return text
    return None
"""
)


def main() -> None:
    _kind, cls = _common.target_kind()
    name = _common.target_name()
    take = f"_rt_ns[{name!r}]" if cls is None else f"_rt_ns[{cls!r}].__dict__[{name!r}]"
    rel = _common.relative_target()
    head = HELPERS + (
        f"\n_rt_text = _rt_find_original({rel!r}, {name!r})\n"
        "if _rt_text is not None:\n"
        "    _rt_ns = {'__name__': __name__}\n"
        "    exec(compile(_rt_text, 'original', 'exec'), _rt_ns)\n"
        f"    _rt_original = {take}\n"
    )
    _common.append(_common.prelude(_common.marker()) + head)
    target = name if cls is None else f"{cls}.{name}"
    _common.append(f"if _rt_text is not None:\n    {target} = _rt_original\n")


if __name__ == "__main__":
    main()
