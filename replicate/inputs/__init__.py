"""A target's hidden inputs beyond the traced calls: widened, mutated and edge values.

Pure: no subprocess, no network. `widen` draws them from the traced calls' seeds with the
strategies, mutations, recipes and relations beside it.
"""
