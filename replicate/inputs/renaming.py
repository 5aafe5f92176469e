"""Renamed calls: a traced call with one of its string arguments renamed everywhere it occurs.

A lookup method (`is_blocked(name)`, `has_plugin(name)`, `get(key)`) answers differently for a
name its object holds than for any other.  Tests ask it of exactly the names they put in the
object, in calls the agent can read; generated values for the argument are names the object
does not hold, so `return False` (or a table of the visible calls) matches the reference on all
of them and the task is dropped as too weak.  A renamed call keeps the seed's shape and changes
its name: every string of the seed's pickle equal to the argument (the argument itself, the
dictionary key or list item in `self` that holds it, the copy a second argument holds) becomes
one fresh name.  The object then holds a name no visible call shows, and asking for it tells the
reference from the degenerate programs.  The other strings the arguments hold as data (what the
runner's encoding shows as a key, an item or an attribute's value; never an attribute's name,
which would make a state the class never reaches) are renamed in turn with the arguments': a
method without a name argument (`list_name_plugin()`, `get_name(plugin)`) then answers on an
object no visible call shows.

The pickle is rewritten opcode by opcode (`pickletools`; nothing is unpickled on the trusted
side): string opcodes equal to the old name are re-emitted with the new one, frames dropped
(they are optional), everything else copied.  A name that also spells a module or a global's
qualified name (what `STACK_GLOBAL` reads) is never renamed, nor one the library's own source
spells (the caller's `spelled`: a key the library writes itself is its protocol, not a name).
What the reference does on a renamed call is judged by running it like any generated input; a
renamed call that made the reference raise where its seed returned renamed something the object
relies on and is not kept (`replicate.gen.survivors.search`).
"""

from __future__ import annotations

import functools
import itertools
import pickletools
import random
import string
import struct
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.core import CallInput, Target
from replicate.inputs.recipes import is_ctor, recipe_b64, replacements, seed_call
from replicate.inputs.signature import ParamSlot
from replicate.inputs.widening import Budget, Seed, plain_slots, task_seed

_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"}
_GETS = {"GET", "BINGET", "LONG_BINGET"}
_PUTS = {"PUT", "BINPUT", "LONG_BINPUT"}
_NO_VALUE = object()
MAX_NAME = 64  # longer strings are text, not names
BY_VALUE_CLASS = "replicate-class-"  # the harvest's ids of classes pickled by value


def strings_and_globals(data: bytes) -> tuple[set[str], set[str]]:
    """Every string a pickle holds, and those a global's lookup reads (module and name)."""
    parsed = _parsed(data)
    if parsed is None:
        raise ValueError("not a pickle")
    return set(parsed.held), set(parsed.named)


def renamed(data: bytes, old: str, new: str, also: Mapping[str, str] | None = None) -> bytes | None:
    """The pickle with every string equal to `old` replaced by `new` (and each key of `also`
    by its value); None when `old` is not among its strings, any of them spells a global's
    name, or the pickle does not parse."""
    names = {**(also or {}), old: new}
    parsed = _parsed(data)
    if parsed is None or old not in parsed.held or set(names) & parsed.named:
        return None
    out = bytearray()
    for name, arg, start, end in parsed.ops:
        if name == "FRAME":
            continue
        swap = name in _STRINGS and arg in names
        out += _string_op(names[str(arg)]) if swap else data[start:end]
    return bytes(out)


@dataclass(frozen=True)
class _Parsed:
    ops: tuple[tuple[str, Any, int, int], ...]  # name, argument, start and end of each opcode
    held: frozenset[str]
    named: frozenset[str]


@functools.lru_cache(maxsize=64)
def _parsed(data: bytes) -> _Parsed | None:
    """A pickle's opcodes, its strings and those a global's lookup reads, read once per pickle
    (a few seeds give every renamed call of a task); None when it does not parse."""
    try:
        listed = list(pickletools.genops(data))
    except (ValueError, TypeError, struct.error):
        return None
    ends = [pos for _, _, pos in listed[1:]] + [len(data)]
    ops = tuple(
        (op.name, arg, int(pos or 0), int(end or 0))
        for (op, arg, pos), end in zip(listed, ends, strict=True)
    )
    held: set[str] = set()
    named: set[str] = set()
    memo: dict[int, object] = {}
    recent: list[object] = []
    for name, arg, _, _ in ops:
        if name in _STRINGS:
            held.add(str(arg))
            recent.append(arg)
        elif name == "MEMOIZE":
            memo[len(memo)] = recent[-1] if recent else _NO_VALUE
        elif name in _PUTS:
            memo[int(str(arg))] = recent[-1] if recent else _NO_VALUE
        elif name in _GETS:
            recent.append(memo.get(int(str(arg)), _NO_VALUE))
        elif name == "STACK_GLOBAL":
            named.update(v for v in recent[-2:] if isinstance(v, str))
            recent.append(_NO_VALUE)
        elif name != "FRAME":
            recent.append(_NO_VALUE)
        del recent[:-2]
    return _Parsed(ops, frozenset(held), frozenset(named))


def own_classes(held: Iterable[str], suffix: str) -> dict[str, str]:
    """New ids for the classes the pickle carries by value (the harvest's cloudpickle ids,
    `BY_VALUE_CLASS`): cloudpickle makes one class per id in a process and sets the state of
    the next pickle with that id on the same class object, so a renamed copy of a test's class
    (a method renamed with the hook it implements) would rename the seed's class too, for every
    input of the run that loads it after.  With its own ids the renamed call has its own
    classes."""
    return {tid: f"{tid}-{suffix}" for tid in held if tid.startswith(BY_VALUE_CLASS)}


def _string_op(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) < 256:
        return b"\x8c" + bytes([len(raw)]) + raw  # SHORT_BINUNICODE
    return b"X" + struct.pack("<I", len(raw)) + raw  # BINUNICODE


def renamings(
    target: Target,
    seeds: Sequence[Seed],
    first_index: int,
    limit: int,
    salt: str = "",
    spelled: frozenset[str] = frozenset(),
) -> tuple[CallInput, ...]:
    """Up to `limit` renamed calls, indexed from `first_index`, from the seeds that returned:
    in turn one of their string arguments renamed, and one of the other strings their
    arguments hold as data (in a method's `self`, a name registered earlier, which a method
    without such an argument lists, returns or looks up by another key).  A string in
    `spelled` (the library's own literals: a key it writes itself) is never renamed."""
    budget = Budget()
    usable = [
        s for s in seeds if s.returned and len(seed_call(s.item).call) <= budget.max_seed_bytes
    ]
    pools = [[c for c in pool if c[2] not in spelled] for pool in _names(usable, target.kind)]
    pools = [pool for pool in pools if pool]
    if not pools or limit <= 0:
        return ()
    rng = random.Random(task_seed(target, f"rename\x00{salt}"))
    made: list[CallInput] = []
    seen: set[tuple[bytes, str, str]] = set()
    for seed, slot, old in itertools.islice(_in_turn(pools, rng), limit * 4):
        if len(made) >= limit:
            break
        call = seed_call(seed.item).call
        parsed = _parsed(call)
        if parsed is None:
            continue
        held = parsed.held
        new = _fresh(old, held, rng)
        index = first_index + len(made)
        data = renamed(call, old, new, own_classes(held, f"renamed-{index}"))
        if data is None or (call, old, new) in seen:
            continue
        seen.add((call, old, new))
        made.append(_input(seed, slot, new, data, index))
    return tuple(made)


_Choice = tuple[Seed, ParamSlot | None, str]


def _names(seeds: Sequence[Seed], kind: str) -> tuple[list[_Choice], list[_Choice]]:
    """The seed calls' own string arguments short enough to be names (never their class
    calls'), and the other such strings their arguments hold as data (`data_strings`)."""
    arguments: list[_Choice] = []
    held: list[_Choice] = []
    for seed in seeds:
        own = {
            slot: v
            for slot, v in plain_slots(seed, kind).items()
            if not is_ctor(slot) and isinstance(v, str) and 0 < len(v) <= MAX_NAME
        }
        arguments.extend((seed, slot, v) for slot, v in own.items())
        data: set[str] = set()
        for node in (*seed.args, *seed.kwargs.values()):
            data |= data_strings(node)
        others = sorted(data - set(own.values()))
        held.extend((seed, None, v) for v in others if 0 < len(v) <= MAX_NAME)
    return arguments, held


def data_strings(node: Any) -> set[str]:
    """The strings the runner's encoding of a value shows as data (dictionary keys and values,
    items, attribute values), never an attribute's or a type's name: renaming an attribute's
    name would make a state the class never reaches."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("t") == "str" and isinstance(item.get("v"), str):
                found.add(item["v"])
                continue
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _in_turn(pools: list[list[_Choice]], rng: random.Random) -> Iterator[_Choice]:
    """One choice from each pool in turn, each pool in a shuffled order, round and round."""
    orders = [_shuffled_forever(pool, rng) for pool in pools]
    while True:
        for order in orders:
            yield next(order)


def _shuffled_forever(pool: list[_Choice], rng: random.Random) -> Iterator[_Choice]:
    while True:
        order = list(pool)
        rng.shuffle(order)
        yield from order


def _fresh(old: str, held: Container[str], rng: random.Random) -> str:
    """Lowercase letters, as many as the old name has (at most 12), that the pickle lacks."""
    size = max(1, min(len(old), 12))
    for attempt in itertools.count():
        name = "".join(rng.choice(string.ascii_lowercase) for _ in range(size + attempt // 8))
        if name not in held:
            return name
    raise AssertionError("unreachable")


def _input(seed: Seed, slot: ParamSlot | None, new: str, data: bytes, index: int) -> CallInput:
    patch = {} if slot is None else {slot: new}
    return CallInput(
        index=index,
        stratum="widened",
        provenance="widened",
        origin=seed.item.origin,
        pickle_b64=recipe_b64(data, patch),
        replaced=replacements(patch),
        visible=False,
    )
