"""Which code is the repository's test code, and each test's chances made the same in every
harvest: the parts of the harvest plugin (`plugin.py`) that read where a call came from.

Standard library only: shipped beside the plugin as `replicate_harvest_test_code.py`.  A recorded
call is `visible` when `from_tests` says so: what an agent can read in its workspace.
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import tempfile
from typing import Any

TEST_DIRS = frozenset({"tests", "test", "testing"})
TEST_FILES = frozenset({"conftest.py", "test.py", "tests.py"})
_HERE = os.path.dirname(os.path.abspath(__file__))  # the harvest's files: this one and beside it


def from_tests(frame: Any) -> bool:
    """Whether the call was made by test code or a doctest: the first caller outside the
    harvest's files (a class's sequence step may stand between) is in a test file (or a
    conftest, or under a tests folder) below the directory pytest runs in, or in a doctest."""
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == _HERE:
        frame = frame.f_back
    if frame is None:
        return False
    return is_test_file(frame.f_code.co_filename, os.getcwd())


@functools.lru_cache(maxsize=4096)  # asked on every distinct call: of a few files, many times
def is_test_file(filename: str, root: str) -> bool:
    if filename.startswith("<doctest "):
        return True
    if filename.startswith("<") or not os.path.isabs(filename):
        return False
    rel = os.path.relpath(filename, root)
    if rel.startswith(".."):
        return False  # the standard library, site-packages, this plugin's own folder
    *folders, name = rel.split(os.sep)
    is_test = name.startswith("test_") or name.endswith("_test.py") or name in TEST_FILES
    return is_test or any(folder in TEST_DIRS for folder in folders)


def same_chance(nodeid: str) -> None:
    """The test's draws from `random` and its temporary files' names the same in every harvest
    (seeded by the test's id, before its fixtures): a test that passes a temporary directory or
    a random number to a target records it, and a re-mint of the same commit should record the
    same calls (boltons' ioutils tests gave /tmp/tmp894bt9wi in one gen, /tmp/tmpolbq99a1 in
    the next).  tempfile's name sequence is private; where it is not there, names stay random."""
    seed = int.from_bytes(hashlib.sha256(nodeid.encode("utf-8", "replace")).digest()[:8], "big")
    random.seed(seed)
    make = getattr(tempfile, "_RandomNameSequence", None)
    if make is None or not hasattr(tempfile, "_name_sequence"):
        return
    names = make()
    names._rng = random.Random(seed)
    names._rng_pid = os.getpid()  # else it makes itself a fresh, randomly seeded generator
    tempfile._name_sequence = names
