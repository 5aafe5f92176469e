"""The records JavaScript values are read into on the trusted side (`values.javascript` reads
and writes the runner's tagged nodes of them, and says how they compare; pure)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

MAX_DEPTH = 64
MAX_DIGITS = 4000
TYPED_KINDS = frozenset(
    {
        "Int8Array",
        "Uint8Array",
        "Uint8ClampedArray",
        "Int16Array",
        "Uint16Array",
        "Int32Array",
        "Uint32Array",
        "Float32Array",
        "Float64Array",
        "BigInt64Array",
        "BigUint64Array",
    }
)


class NotJsValue(ValueError):
    """A tagged node that is not one of the runner's."""


@dataclass(frozen=True)
class Undefined:
    pass


@dataclass(frozen=True)
class Null:
    pass


@dataclass(frozen=True)
class Hole:
    """An array index with no property (`[, 1]`), apart from one holding undefined."""


@dataclass(frozen=True)
class Num:
    """A number by its exact bits' hex text: NaN is one value, -0 another than 0."""

    hex: str

    @classmethod
    def of(cls, value: float) -> Num:
        value = float(value)
        return cls("nan" if math.isnan(value) else float.hex(value))

    @property
    def value(self) -> float:
        return float.fromhex(self.hex)


ZERO = Num("0x0.0p+0")


@dataclass(frozen=True)
class BigInt:
    value: int


@dataclass(frozen=True)
class Symbol:
    description: str | None


@dataclass(frozen=True)
class Function:
    """A function, by its own name; as a call's argument the recorder saw the target call, also
    `answers`: each call the target made to it while the tests ran, with what it gave back,
    which the runner's rebuilt function answers again (None: not recorded, calling it throws).
    Two functions are equal by name: the answers are what a replay needs, not what it compares."""

    name: str
    answers: tuple[Answer, ...] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Answer:
    """One call a function argument answered: its arguments, and the value it returned or the
    error it threw (exactly one of the two)."""

    args: tuple[JsValue, ...]
    value: JsValue | None = None
    error: JsValue | None = None


@dataclass(frozen=True)
class Array:
    items: tuple[JsValue, ...]


Fields = tuple[tuple[str, "JsValue"], ...]  # sorted by key


@dataclass(frozen=True)
class PlainObject:
    fields: Fields
    null_proto: bool = False


@dataclass(frozen=True)
class Instance:
    class_name: str
    fields: Fields


@dataclass(frozen=True)
class ErrorValue:
    class_name: str
    message: str
    fields: Fields = ()


@dataclass(frozen=True)
class JsMap:
    entries: tuple[tuple[JsValue, JsValue], ...]  # sorted: order is not compared


@dataclass(frozen=True)
class JsSet:
    items: tuple[JsValue, ...]  # sorted


@dataclass(frozen=True)
class Date:
    time: Num


@dataclass(frozen=True)
class RegExp:
    source: str
    flags: str
    last_index: Num = ZERO


@dataclass(frozen=True)
class Typed:
    kind: str
    items: tuple[Num | BigInt, ...]


@dataclass(frozen=True)
class Buffer:
    data: bytes


@dataclass(frozen=True)
class Settled:
    """A returned promise, awaited: what it fulfilled with."""

    value: JsValue


@dataclass(frozen=True)
class Getter:
    """An accessor property: the runner never calls it."""


@dataclass(frozen=True)
class Opaque:
    kind: str  # Proxy, Promise (inside a value), WeakMap, WeakSet, DataView...


@dataclass(frozen=True)
class Ref:
    up: int  # levels up to the container this one repeats


@dataclass(frozen=True)
class Cut:
    reason: str  # "depth" or "size"


JsValue: TypeAlias = (
    bool
    | str
    | Undefined
    | Null
    | Hole
    | Num
    | BigInt
    | Symbol
    | Function
    | Array
    | PlainObject
    | Instance
    | ErrorValue
    | JsMap
    | JsSet
    | Date
    | RegExp
    | Typed
    | Buffer
    | Settled
    | Getter
    | Opaque
    | Ref
    | Cut
)


def fields(pairs: Mapping[str, JsValue]) -> Fields:
    """Own fields in canonical (key) order."""
    return tuple(sorted(pairs.items()))


def js_set(items: tuple[JsValue, ...]) -> JsSet:
    return JsSet(tuple(sorted(items, key=repr)))


def js_map(entries: tuple[tuple[JsValue, JsValue], ...]) -> JsMap:
    return JsMap(tuple(sorted(entries, key=repr)))
