"""An object reached again by another path is not walked again (`_Encoder.reuse`): the encoding
must read exactly as walking it again gives, bounds included (depth, size, visits of one object,
cycles), and code the value runs while it is encoded (an iterator's) must be seen."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from replicate.jail.runner.base import EncodeLimits
from replicate.jail.runner.channel import _dumps
from replicate.jail.runner.encoding import _Encoder, encode


class Node:
    """A plain object whose fields are set after it is built (so it can take part in cycles);
    the annotations name the fields the tests set (annotations alone add no class attribute)."""

    changed: int
    left: Any
    right: Any
    held: Any
    deep: Any
    shallow: Any
    value: Any


class Slotted:
    __slots__ = ("a", "b")


KINDS = ("obj", "slots", "list", "dict", "set", "gen")


@dataclass(frozen=True)
class Spec:
    kind: str
    scalars: tuple[int | str, ...]
    children: tuple[int, ...]  # indices of other nodes: shared, and cyclic where they lead back
    touches: int  # a generator: the node whose fields it changes as it runs


def _node(kind: str, scalars: tuple[int | str, ...]) -> Any:
    made: dict[str, Callable[[], Any]] = {
        "obj": Node,
        "slots": Slotted,
        "list": list,
        "dict": dict,
        "set": lambda: set(scalars),
    }
    return made[kind]() if kind in made else None


def _generator(children: list[Any], touched: Any) -> Iterator[Any]:
    for child in children:
        if isinstance(touched, Node):
            touched.changed = getattr(touched, "changed", 0) + 1  # code of the value's own
        yield child


def build(specs: list[Spec]) -> Any:
    """A fresh object graph (generators are used up by encoding) from `specs`; node 0 its root."""
    nodes = [_node(s.kind, s.scalars) for s in specs]
    for n, spec in enumerate(specs):
        kids = [nodes[c % len(nodes)] for c in spec.children]
        here = nodes[n]
        if spec.kind == "obj":
            for k, kid in enumerate(kids):
                setattr(here, f"f{k}", kid)
            here.s = spec.scalars
        elif spec.kind == "slots":
            here.a = kids[0] if kids else spec.scalars
            here.b = kids[1:]
        elif spec.kind == "list":
            here.extend([*kids, *spec.scalars])
        elif spec.kind == "dict":
            here.update({f"k{k}": kid for k, kid in enumerate(kids)})
    for n, spec in enumerate(specs):  # generators last: they hold the built nodes
        if spec.kind == "gen":
            kids = [nodes[c % len(nodes)] for c in spec.children]
            nodes[n] = _generator(kids, nodes[spec.touches % len(nodes)])
    for n, spec in enumerate(specs):  # and whoever points at a generator now holds it
        if specs[n].kind in ("obj", "list") and any(
            specs[c % len(specs)].kind == "gen" for c in spec.children
        ):
            kids = [nodes[c % len(nodes)] for c in spec.children]
            if spec.kind == "obj":
                for k, kid in enumerate(kids):
                    setattr(nodes[n], f"f{k}", kid)
            else:
                nodes[n][:] = [*kids, *spec.scalars]
    return nodes[0]


scalar = st.one_of(st.integers(-5, 5), st.text("ab", max_size=3))
spec = st.builds(
    Spec,
    kind=st.sampled_from(KINDS),
    scalars=st.lists(scalar, max_size=3).map(tuple),
    children=st.lists(st.integers(0, 7), max_size=4).map(tuple),
    touches=st.integers(0, 7),
)
limits = st.builds(
    EncodeLimits,
    max_items=st.integers(0, 4),
    max_depth=st.integers(1, 9),
    max_bytes=st.sampled_from([60, 300, 2_000, 50_000]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(spec, min_size=1, max_size=8), limits)
def test_sharing_reads_as_walking_again(specs: list[Spec], lim: EncodeLimits) -> None:
    walked = _dumps(encode(build(specs), lim, share=False))
    assert _dumps(encode(build(specs), lim, share=True)) == walked


def _diamonds(levels: int) -> Any:
    """Each level holds the one below it twice: 2**levels paths to the bottom."""
    node: Any = ["bottom"]
    for _ in range(levels):
        top = Node()
        top.left = top.right = node
        node = top
    return node


def test_a_shared_object_is_walked_once_and_its_visits_still_count() -> None:
    lim = EncodeLimits(max_depth=64, max_bytes=10**9)
    graph = _diamonds(5)
    walked = _Encoder(lim, share=False)
    walked.enc(graph, 0)
    shared = _Encoder(lim)
    shared.enc(graph, 0)
    assert shared.visits == walked.visits  # the same count of visits per object...
    assert len(shared.log) < sum(walked.visits.values())  # ...without making them
    # past 64 visits of one object the value is too large, shared or not (the control: 6 levels)
    assert (
        encode(_diamonds(6), lim)["t"] == encode(_diamonds(6), lim, share=False)["t"] != "toolarge"
    )
    assert encode(_diamonds(7), lim)["t"] == "toolarge"
    assert encode(_diamonds(7), lim, share=False)["t"] == "toolarge"


def test_a_shared_object_spends_the_size_budget_each_time_it_is_reached() -> None:
    big = EncodeLimits(max_depth=64, max_bytes=10**9)
    walked = _Encoder(big, share=False)
    walked.enc(_diamonds(5), 0)
    spent = big.max_bytes - walked.budget
    tight = EncodeLimits(max_depth=64, max_bytes=spent - 1)
    assert encode(_diamonds(5), tight, share=False)["t"] == "toolarge"
    assert encode(_diamonds(5), tight)["t"] == "toolarge"
    fits = EncodeLimits(max_depth=64, max_bytes=spent)  # the control: at the budget, it fits
    assert encode(_diamonds(5), fits)["t"] == encode(_diamonds(5), fits, share=False)["t"] == "obj"


def _wrapped(value: Any, times: int) -> Any:
    for _ in range(times):
        value = [value]
    return value


def test_an_object_holding_a_reused_one_is_as_deep_as_both() -> None:
    """`inner` is walked first outside `outer`, so inside `outer` it is reused; `outer`, reached
    again further down, must cut at the depth bound exactly where walking it would."""
    inner = _wrapped("bottom", 3)
    outer = Node()
    outer.held = inner
    after_deep = Node()  # a shallow field after a deep one: the deep one still counts
    after_deep.deep, after_deep.shallow = _wrapped("bottom", 5), Node()
    for root in ([inner, outer, _wrapped(outer, 4)], [after_deep, _wrapped(after_deep, 3)]):
        for depth in range(1, 14):
            lim = EncodeLimits(max_depth=depth)
            assert _dumps(encode(root, lim)) == _dumps(encode(root, lim, share=False)), depth


def test_a_deep_neighbour_does_not_stop_an_object_from_being_reused() -> None:
    held = Node()
    held.value = 1
    encoder = _Encoder(EncodeLimits(max_depth=9))
    encoder.enc([_wrapped("bottom", 8), held, [held]], 0)
    assert any(type(item) is dict for item in encoder.log)  # `held` reused, one level down
