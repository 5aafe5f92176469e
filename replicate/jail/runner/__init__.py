"""The in-jail runner: import the candidate, call it on each input, report tagged JSON
(docs/design.md §4).

This package is shipped as source into the sandbox (or compiled by the jail's interpreter,
``replicate.jail.bytecode``) and started as ``python -P -s -S -B runner/__main__.py``, which
loads it under the private name ``_replicate_runner`` and imports every part before the
repository's paths exist (so no module of the repository can stand in for one).  Standard
library only, nothing from ``replicate``.  The wire format's names and shapes
(``replicate.jail.wire``) are shipped beside the package and loaded from there
(`base.wire_beside`), not imported: the jail has no ``replicate`` package.

The parts, each importing only from those before it: `base` (captured builtins and library
functions, the wire's names, limits, the alarm), `naming` (names that verify), `channel` (JSON
out, frames), `probes`, `by_type` and `encoding` (tagged values), `byvalue` (callables carried
by value), `calling` (one call on one input), `replay` (a call sequence on a class), `importing`
(setup, the target's import, a session's compiled programs), `processes` and `preloading` (a
session's care of its children and what it imports first), `job` (one run), `sessions` (a
session's runner), `main` (the entry).

Setup (``argv[1]``, optional, one JSON object): ``sys_path`` (prepended in order), ``site_dirs``
(each through ``site.addsitedir``), ``bytecode`` (a compiled-code table, see `_use_bytecode`),
applied before stdin is read, so a jail started ahead of its candidate has done it already.
Job (stdin: one JSON object on the first line, then the run's nonce, unless the object holds
it): ``nonce``, ``module``, ``qualname`` (``func`` or ``Cls.meth``),
``kind``, ``inputs`` (``[{"i", "pickle_b64"}]``, each a pickled ``(args, kwargs)``, self first
for methods, or a pickled recipe ``(RECIPE_TAG, seed, {position: value}, {keyword:
value})``: the call pickled in ``seed`` (bytes) with those arguments replaced, or
``(CTOR_RECIPE_TAG, seed, ctor, build, {position: value}, {keyword: value}, {position:
value}, {keyword: value})`` for a method: ``ctor`` (bytes) is the pickled ``(args, kwargs)`` of
a class call of ``self``'s class, its arguments replaced as the last two maps say; with
``build``, ``self`` is built afresh as ``type(self)(*args, **kwargs)`` (at load, so a class call
that raises is a ``load_error``), else the seed's ``self`` stays),
or ``(SEQUENCE_TAG, ((name, pickled (args, kwargs) or a recipe[, refs]), ...), recorded,
None)``: a call sequence replayed on the target, a class (`replay`: its outcome one tuple, each
step's outcome and the instance at the end), ``call_timeout_s``, ``max_items``, ``max_depth``,
``max_bytes``, ``channel_fd`` and optionally
``encode_inputs`` (also report the arguments before the call as ``args_in``/``kwargs_in``, and
a recipe's class-call arguments as ``ctor_in`` ``{"args", "kwargs"}``).

Frames (fd ``channel_fd`` only, ``<nonce> <json>\n`` each): ``started`` | ``ready`` (the target
imported) or ``import_error`` (type, msg) | ``loaded`` (every input unpickled, before any call) |
``call`` (i), just before each call, so the host can time it with its own clock
(``replicate.jail.calltime``) | ``result`` (i, outcome), written as soon as each call ends,
in one write with the next ``call`` frame | ``done``.  An outcome is
``returned`` (value) or ``raised`` (exc: type, msg), both with ``args``/``kwargs`` after the call
and ``t``; or ``timeout``; or ``load_error`` (msg).  Values are encoded by exact type without
calling the objects' own methods; the trusted side parses and compares them
(``replicate.grading.compare``).  Two exceptions, inside the call's time window: a function the
call returns whose name does not verify is called on probes drawn from the input (`Probes`), and
encoded by what they gave (``wire.PROBED``); an object of a class whose name does not verify,
with an ``__eq__`` of its own, is compared by it with a copy rebuilt from its fields, which
decides its name (`naming.state_type_name`).

Session (``replicate.jail.session``): a first line ``{"session": {...}}`` instead of a job makes
this process seal itself against its children (`_seal`) and fork a child per request read from
an inherited pipe, each child running its request's job as above (`run_session`).

Before any candidate code is imported, each part takes a private copy of the builtins (its
functions look names up there, not in ``builtins``) and captures every library function it needs
in a module-level name, so a candidate patching ``builtins``, ``json``, ``types`` or
``sys.modules`` does not change how values are encoded.  That is best effort: the real guarantee is
that no expected output ever enters this process, so whatever a candidate forges here is worth no
more than computing the answer.
"""
