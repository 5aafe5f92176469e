"""replicate: turn real software into replication-training tasks and grade coding agents."""

from __future__ import annotations

__version__ = "0.1.0"
# Recorded on every minted task and verdict; rewards of different versions are not comparable.
# /2: strata weighted, normalised against degenerate programs and a table of the visible calls;
#     mutant kill rate recorded; the runner unpickles all inputs before the first call.
# /3: a method's `self` is varied through the class call that built it (recipe/2 inputs).
# /4: a baseline of 1 pays 0 (it paid the raw reward); the tables of the visible calls hold only
#     the calls made from test code or a doctest, and count against the floor at gen time.
# /5: outcomes name more callables (a returned closure by its probes, a builtin method bound to
#     an object, a class's classmethod) and widening varies the defaulted parameters a call
#     leaves out, so a target a /4 gen dropped may mint now (a resumed gen tries it again).
#     Expected outcomes of /4 tasks grade as before: none held what is named differently now.
# /6: an iterator among a call's arguments is kept to 1,000 items after the call (a returned one
#     to 10,000, as before); tasks record it as `max_arg_items`, and /5 tasks, which lack it,
#     grade as before (to `max_items`).
# /7: degenerate programs of more families set the baseline (the identity on each parameter, each
#     parameter's empty value, the empty value of the type returned most often); a task whose
#     original is one is dropped. How many items each iterator argument had yielded when the
#     call returned, and once its result was read, is part of the outcome (`arg_reads`), and
#     generated inputs pass a traced call's sequence as an iterator and one iterator in two
#     slots. /6 tasks, which lack `arg_reads`, grade as before, against their recorded baseline.
# /8: an instance of a class whose name does not verify (a class a function makes) and that defines
#     no `__eq__` is named `<by state>` and its claimed name, and compares by that name and its
#     fields (it was `<unverified>`, which matches nothing: its targets were "outcome not
#     comparable"). No expected outcome of a /7 task holds such a name: they grade as before.
# /9: such a class with an `__eq__` of its own is `<by state>` too when that `__eq__` says an
#     object equals a copy rebuilt from its fields, both ways (run in the jail, the class's own
#     code); else `<unverified><__eq__ not by its fields>` and its claimed name, a match for
#     nothing. A candidate's class that adds an `__eq__` now matches a /8 task's `<by state>`
#     object with equal fields (it was `<unverified>`); expected outcomes grade as before.
# /10: a class task's degenerate classes (and the tables of the visible calls in front of them)
#     are graded on its call sequences too, as a candidate is (they were graded on the members'
#     inputs alone); a module task's every-body-None file gains a table of the visible calls in
#     front of it. Baselines of class and module tasks with sequences rise; candidates of a /9
#     task grade as before, against its recorded baseline.
# /11: a JavaScript/TypeScript task records its degenerate programs' baseline (`return
#     undefined`, a throw, its parameters and `this`, its common values, each behind a table of
#     the recorded calls) and its reward is normalised against it, as a Python task's is; a task
#     one of them earns too much on is dropped. A /10 JavaScript task has none: it grades raw,
#     as before. Python tasks grade as before.
# /12: a bare `object()` a library module binds to a name (a sentinel) is encoded as a reference
#     to that name, and a function without a verified name that an argument holds after the
#     call is probed as a returned one is; both were opaque or unverified before, so no /11
#     task holds one, and /11 tasks grade as before.
GRADER_VERSION = "replicate-grader/12"

__all__ = ["GRADER_VERSION", "__version__"]
