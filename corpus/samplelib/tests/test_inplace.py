import copy

import pytest

from samplelib import inplace


def is_even(n):
    return n % 2 == 0


def is_blank(text):
    return not text.strip()


@pytest.mark.parametrize(
    ("items", "key", "removed", "after"),
    [
        ([3, 1, 3, 2, 1], None, 2, [3, 1, 2]),
        ([], None, 0, []),
        ([1, 2, 3], None, 0, [1, 2, 3]),
        (["a", "A", "b", "B", "a"], str.lower, 3, ["a", "b"]),
        ([[1], [1], [2]], None, 1, [[1], [2]]),
        ([-1, 1, -2, 2, 3], abs, 2, [-1, -2, 3]),
        ([0.1, 0.1, 0.2], None, 1, [0.1, 0.2]),
        ([None, None, None], None, 2, [None]),
        (["x", "yy", "zz", "w"], len, 2, ["x", "yy"]),
    ],
)
def test_dedupe_in_place(items, key, removed, after):
    original = items
    assert inplace.dedupe_in_place(items, key=key) == removed
    assert original is items
    assert items == after


@pytest.mark.parametrize("bad", [(1, 1), "aab", {1, 2}])
def test_dedupe_in_place_needs_list(bad):
    with pytest.raises(TypeError):
        inplace.dedupe_in_place(bad)


@pytest.mark.parametrize(
    ("items", "k", "after"),
    [
        ([1, 2, 3, 4, 5], 2, [4, 5, 1, 2, 3]),
        ([1, 2, 3, 4, 5], -2, [3, 4, 5, 1, 2]),
        ([1, 2, 3, 4, 5], 0, [1, 2, 3, 4, 5]),
        ([1, 2, 3, 4, 5], 5, [1, 2, 3, 4, 5]),
        ([1, 2, 3, 4, 5], 7, [4, 5, 1, 2, 3]),
        ([], 3, []),
        (["only"], 10, ["only"]),
        (["a", "b"], -1, ["b", "a"]),
        ([[1], [2], [3]], 1, [[3], [1], [2]]),
    ],
)
def test_rotate_in_place(items, k, after):
    assert inplace.rotate_in_place(items, k) is None
    assert items == after


def test_rotate_in_place_needs_list():
    with pytest.raises(TypeError):
        inplace.rotate_in_place((1, 2, 3), 1)
    with pytest.raises(TypeError):
        inplace.rotate_in_place("abc", 1)


@pytest.mark.parametrize(
    ("target", "sources", "overwrite", "after"),
    [
        ({"a": 1}, [{"a": 2, "b": 3}], True, {"a": 2, "b": 3}),
        ({"a": 1}, [{"a": 2, "b": 3}], False, {"a": 1, "b": 3}),
        ({}, [], True, {}),
        ({}, [{"x": 1}, {"x": 2}, {"y": 3}], True, {"x": 2, "y": 3}),
        ({}, [{"x": 1}, {"x": 2}, {"y": 3}], False, {"x": 1, "y": 3}),
        ({"n": None}, [{"n": 0}], False, {"n": None}),
        ({1: "one"}, [{2: "two"}, {1: "uno"}], True, {1: "uno", 2: "two"}),
        ({"l": [1]}, [{"l": [2]}], True, {"l": [2]}),
    ],
)
def test_merge_into(target, sources, overwrite, after):
    result = inplace.merge_into(target, *sources, overwrite=overwrite)
    assert result is target
    assert target == after


def test_merge_into_needs_dict_target():
    with pytest.raises(TypeError):
        inplace.merge_into([("a", 1)], {"b": 2})
    with pytest.raises(AttributeError):
        inplace.merge_into({}, [("b", 2)])


@pytest.mark.parametrize(
    ("target", "source", "after"),
    [
        ({"db": {"host": "x", "port": 1}, "debug": False}, {"db": {"port": 2}, "debug": True},
         {"db": {"host": "x", "port": 2}, "debug": True}),
        ({}, {}, {}),
        ({}, {"a": {"b": {"c": 1}}}, {"a": {"b": {"c": 1}}}),
        ({"a": 1}, {"a": {"b": 2}}, {"a": {"b": 2}}),
        ({"a": {"b": 2}}, {"a": 1}, {"a": 1}),
        ({"a": {"x": 1}}, {"a": {"y": {"z": 2}}}, {"a": {"x": 1, "y": {"z": 2}}}),
        ({"l": [1, 2]}, {"l": [3]}, {"l": [3]}),
        ({"k": {"deep": {"er": 0}}}, {"k": {"deep": {"er": 1, "est": 2}}},
         {"k": {"deep": {"er": 1, "est": 2}}}),
    ],
)
def test_deep_merge(target, source, after):
    source_before = copy.deepcopy(source)
    assert inplace.deep_merge(target, source) is target
    assert target == after
    assert source == source_before


def test_deep_merge_copies_nested_source_dicts():
    source = {"a": {"b": 1}}
    target = inplace.deep_merge({}, source)
    source["a"]["b"] = 99
    assert target == {"a": {"b": 1}}
    with pytest.raises(TypeError):
        inplace.deep_merge({}, [("a", 1)])


@pytest.mark.parametrize(
    ("items", "pred", "removed", "after"),
    [
        ([1, 2, 3, 4, 5, 6], is_even, [2, 4, 6], [1, 3, 5]),
        ([], is_even, [], []),
        ([1, 3], is_even, [], [1, 3]),
        ([2, 4], is_even, [2, 4], []),
        (["a", " ", "", "b"], is_blank, [" ", ""], ["a", "b"]),
        ([0, 1, None, "x", ""], bool, [1, "x"], [0, None, ""]),
        ([-1.5, 2.5, -0.5], abs, [-1.5, 2.5, -0.5], []),
        ([[1], [], [2, 3]], len, [[1], [2, 3]], [[]]),
    ],
)
def test_remove_where(items, pred, removed, after):
    assert inplace.remove_where(items, pred) == removed
    assert items == after


@pytest.mark.parametrize(
    ("mapping", "path", "value", "after"),
    [
        ({}, "server.http.port", 8080, {"server": {"http": {"port": 8080}}}),
        ({}, "a", 1, {"a": 1}),
        ({"a": {"b": 1}}, "a.c", 2, {"a": {"b": 1, "c": 2}}),
        ({"a": {"b": 1}}, "a.b", None, {"a": {"b": None}}),
        ({}, ["x", 1, (2, 3)], "deep", {"x": {1: {(2, 3): "deep"}}}),
        ({"a": 5}, "b.c", [1], {"a": 5, "b": {"c": [1]}}),
        ({}, ("only",), 0.5, {"only": 0.5}),
        ({"a": {}}, "a.b.c.d", 4, {"a": {"b": {"c": {"d": 4}}}}),
    ],
)
def test_set_nested(mapping, path, value, after):
    assert inplace.set_nested(mapping, path, value) is None
    assert mapping == after


@pytest.mark.parametrize(
    ("mapping", "path", "error"),
    [
        ({"a": 1}, "a.b", TypeError),
        ({"a": [1]}, "a.b.c", TypeError),
        ({}, "", ValueError),
        ({}, [], ValueError),
    ],
)
def test_set_nested_errors(mapping, path, error):
    with pytest.raises(error):
        inplace.set_nested(mapping, path, 1)


@pytest.mark.parametrize(
    ("mapping", "path", "value", "after"),
    [
        ({"a": {"b": {"c": 1}}, "x": 0}, "a.b.c", 1, {"x": 0}),
        ({"a": {"b": {"c": 1, "d": 2}}}, "a.b.c", 1, {"a": {"b": {"d": 2}}}),
        ({"a": 1}, "a", 1, {}),
        ({"a": {"b": [1, 2]}}, "a.b", [1, 2], {}),
        ({"a": {"b": {}}, "c": 3}, "a.b", {}, {"c": 3}),
        ({"a": {"b": 1, "c": {"d": None}}}, "a.c.d", None, {"a": {"b": 1}}),
        ({"k": {"v": 0.25}, "j": {}}, "k.v", 0.25, {"j": {}}),
        ({"": {"": 5}}, ".", 5, {}),
    ],
)
def test_pop_nested(mapping, path, value, after):
    assert inplace.pop_nested(mapping, path) == value
    assert mapping == after


@pytest.mark.parametrize(
    ("mapping", "path"),
    [({}, "a"), ({"a": 1}, "a.b"), ({"a": {"b": 1}}, "a.c"), ({"a": {"b": 1}}, "x.b"),
     ({"a": {"b": 1}}, "")],
)
def test_pop_nested_missing(mapping, path):
    before = copy.deepcopy(mapping)
    with pytest.raises(KeyError):
        inplace.pop_nested(mapping, path)
    assert mapping == before
