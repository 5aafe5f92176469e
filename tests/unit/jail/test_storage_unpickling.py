"""An input holding a dict or list subclass whose item methods read an attribute loads in the
runner (`base._pickle_loads`): pickle sets the items before the attributes, so plain
`pickle.loads` fails on it (the control), as it did on prettytable's `ObservableDict`."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from replicate.jail.runner import base


class Observed(dict):  # type: ignore[type-arg]
    def __init__(self, *args: Any, callback: Any = None) -> None:
        self.callback = callback
        super().__init__(*args)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.callback(key)  # the attribute is not there yet while pickle sets the items
        super().__setitem__(key, value)


class Logged(list):  # type: ignore[type-arg]
    def __init__(self, items: Any = (), log: Any = None) -> None:
        self.log = log
        super().__init__(items)

    def append(self, item: Any) -> None:
        self.log.append(item)
        super().append(item)

    def extend(self, items: Any) -> None:
        for item in items:
            self.append(item)


def _noop(_key: Any) -> None:
    return None


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_subclass_items_load_into_their_storage(protocol: int) -> None:
    observed = Observed({"a": 1, "b": [2]}, callback=_noop)
    logged = Logged([1, 2, 3], log=[])
    call = ((observed, logged, {"plain": Observed({"x": 0}, callback=_noop)}), {"k": observed})
    data = pickle.dumps(call, protocol=protocol)
    with pytest.raises((AttributeError, TypeError)):
        pickle.loads(data)  # the control: what the runner did before
    (args, kwargs) = base._pickle_loads(data)
    assert args[0] == {"a": 1, "b": [2]} and args[0].callback is _noop
    assert args[1] == [1, 2, 3] and args[1].log == []  # as pickled: nothing appended twice
    assert args[2]["plain"] == {"x": 0} and kwargs["k"] is args[0]  # identity kept


def test_plain_inputs_still_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_data: Any) -> Any:
        raise AssertionError("the Python unpickler was used")

    monkeypatch.setattr(base, "_StorageUnpickler", refuse)
    assert base._pickle_loads(pickle.dumps(((1, [2]), {"a": {3}}))) == ((1, [2]), {"a": {3}})
