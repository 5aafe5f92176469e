"""A recipe's bytes are the same whatever the hash seed of the process that made it (a re-mint
writes the same inputs): each made in a process of its own."""

from __future__ import annotations

import base64
import os
import pickle
import subprocess
import sys

from replicate.inputs.recipes import RECIPE_TAG

# A recipe made in a process of its own under a given hash seed: a set of strings (nested in a
# frozenset, a dict key, an iterator argument; one set twice), and, the control, the same patch
# by the plain pickler.
MADE_UNDER_A_SEED = """
import base64, pickle, sys
from replicate.inputs.recipes import recipe_b64
from replicate.values import plain
words = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
patch = {0: words, 1: [words, frozenset({"x", frozenset(words)})], "k": {frozenset(words): 1},
         "it": plain.Items((words,))}
print(recipe_b64(b"seed", patch))
print(base64.b64encode(pickle.dumps(patch[0], protocol=4)).decode())
"""


def _made_under(seed: int) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-c", MADE_UNDER_A_SEED], env=env, capture_output=True, check=True
    )
    return done.stdout.decode().split()


def test_recipe_bytes_do_not_depend_on_the_hash_seed_of_the_process_that_made_them() -> None:
    (ours_1, plain_1), (ours_2, plain_2) = _made_under(1), _made_under(2)
    assert plain_1 != plain_2  # the control: the C pickler writes a set in hash order
    assert ours_1 == ours_2
    assert pickle.loads(base64.b64decode(ours_1))[0] == RECIPE_TAG
