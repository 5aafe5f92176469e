"""Start the runner in the jail: ``python -P -s -S -B <this file> [setup]``.

The package is loaded from this file's folder under a private name, and every part imported
now, before the runner's setup puts the repository's paths on ``sys.path`` (``-P``: this folder
is not on it either), so nothing the repository holds can stand in for a part.
"""

import importlib
import importlib.util
import os
import sys

PACKAGE = "_replicate_runner"
PARTS = (
    "base",
    "naming",
    "channel",
    "probes",
    "by_type",
    "encoding",
    "byvalue",
    "calling",
    "replay",
    "importing",
    "processes",
    "preloading",
    "job",
    "sessions",
    "main",
)


def boot() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    suffix = ".pyc" if __file__.endswith(".pyc") else ".py"
    init = os.path.join(here, "__init__" + suffix)
    spec = importlib.util.spec_from_file_location(PACKAGE, init, submodule_search_locations=[here])
    if spec is None or spec.loader is None:
        raise ImportError(f"no runner package at {here}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    parts = [importlib.import_module(f"{PACKAGE}.{name}") for name in PARTS]
    parts[-1].main()


if __name__ == "__main__":
    boot()
