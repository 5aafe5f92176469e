"""Hypothesis strategies for JavaScript value records (`replicate.values.javascript`), shared by
the pure round-trip tests and the round trip through the real Node runner."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from replicate.values import javascript as js

KEYS = st.text(max_size=6)
STRINGS = st.text(max_size=12)  # any code point, lone surrogates included


def numbers() -> st.SearchStrategy[js.Num]:
    return st.floats(allow_nan=True, allow_infinity=True).map(js.Num.of)


def times(*, invalid: bool = True) -> st.SearchStrategy[js.Num]:
    """A Date's time as JavaScript keeps it: whole milliseconds within 8.64e15 of 1970 (its
    constructor clips anything else to NaN), or NaN (an Invalid Date) when `invalid`."""
    whole = st.integers(min_value=-(8_640 * 10**12), max_value=8_640 * 10**12).map(js.Num.of)
    return st.one_of(whole, st.just(js.Num.of(math.nan))) if invalid else whole


def bigints() -> st.SearchStrategy[js.BigInt]:
    return st.integers(min_value=-(2**130), max_value=2**130).map(js.BigInt)


def typed_arrays() -> st.SearchStrategy[js.Typed]:
    small = st.lists(st.integers(0, 255).map(js.Num.of), max_size=4)
    floats = st.lists(numbers(), max_size=4)
    bigs = st.lists(st.integers(0, 2**64 - 1).map(js.BigInt), max_size=4)
    return st.one_of(
        small.map(lambda items: js.Typed("Uint8Array", tuple(items))),
        floats.map(lambda items: js.Typed("Float64Array", tuple(items))),
        bigs.map(lambda items: js.Typed("BigUint64Array", tuple(items))),
    )


def leaves(*, identities: bool = True) -> st.SearchStrategy[js.JsValue]:
    """Values without parts; `identities` False leaves out what Node's deepStrictEqual compares
    by identity or not as the records do: functions, symbols and Invalid Dates."""
    out: list[st.SearchStrategy[js.JsValue]] = [
        st.booleans(),
        STRINGS,
        st.just(js.Undefined()),
        st.just(js.Null()),
        numbers(),
        bigints(),
        times(invalid=identities).map(js.Date),
        st.sampled_from(["a+", "^x$", "[0-9]{2}", "\\s"]).flatmap(
            lambda source: st.sampled_from(["", "g", "gi", "u"]).map(
                lambda flags: js.RegExp(source, flags)
            )
        ),
        typed_arrays(),
        st.binary(max_size=6).map(js.Buffer),
    ]
    if identities:
        out.append(st.one_of(st.none(), STRINGS).map(js.Symbol))
        out.append(st.text(max_size=5).map(js.Function))
    return st.one_of(*out)


def values(*, identities: bool = True, map_keys: bool = True) -> st.SearchStrategy[js.JsValue]:
    """Any JS value record without cycles; `map_keys` False keeps Map keys and Set items to
    strings (a real Map folds -0 into 0 and keeps one NaN: a round trip through Node would
    change such a value, not the encoding)."""

    def containers(inner: st.SearchStrategy[js.JsValue]) -> st.SearchStrategy[js.JsValue]:
        keyed = st.dictionaries(KEYS, inner, max_size=4).map(js.fields)
        member = inner if map_keys else STRINGS
        return st.one_of(
            st.lists(st.one_of(inner, st.just(js.Hole())), max_size=4).map(
                lambda items: js.Array(tuple(items))
            ),
            st.tuples(keyed, st.booleans()).map(lambda p: js.PlainObject(*p)),
            st.tuples(st.sampled_from(["Point", "Range", "Node"]), keyed).map(
                lambda p: js.Instance(*p)
            ),
            st.tuples(st.sampled_from(["Error", "TypeError", "RangeError"]), STRINGS).map(
                lambda p: js.ErrorValue(*p)
            ),
            st.lists(st.tuples(member, inner), max_size=3, unique_by=lambda p: p[0]).map(
                lambda entries: js.js_map(tuple(entries))
            ),
            st.lists(member, max_size=3, unique=True).map(lambda items: js.js_set(tuple(items))),
        )

    return st.recursive(leaves(identities=identities), containers, max_leaves=12)


def cyclic() -> list[js.JsValue]:
    """Values holding cycles: an object holding itself, an array inside an object holding the
    object, a Map whose value is the Map."""
    return [
        js.PlainObject(js.fields({"self": js.Ref(1), "n": js.Num.of(1)})),
        js.PlainObject(js.fields({"items": js.Array((js.Ref(2), js.Ref(1)))})),
        js.js_map((("me", js.Ref(1)),)),
    ]
