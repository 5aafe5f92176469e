import pickle
import unittest

import pytest

from samplelib.containers import BoundedQueue, Inventory


def make_queue(capacity, items, overflow="error"):
    queue = BoundedQueue(capacity, overflow=overflow)
    for item in items:
        queue.push(item)
    return queue


@pytest.mark.parametrize(
    ("capacity", "overflow", "pushes", "returns", "final"),
    [
        (2, "drop_oldest", ["a", "b", "c"], [None, None, "a"], ["b", "c"]),
        (3, "error", [1, 2, 3], [None, None, None], [1, 2, 3]),
        (1, "drop_oldest", [1, 2, 3], [None, 1, 2], [3]),
        (1, "drop_oldest", [None, 5], [None, None], [5]),
        (4, "drop_oldest", [], [], []),
        (2, "error", [(1, 2)], [None], [(1, 2)]),
        (2, "drop_oldest", [0.5, 1.5, 2.5, 3.5], [None, None, 0.5, 1.5], [2.5, 3.5]),
        (5, "drop_oldest", list("abcdefg"), [None] * 5 + ["a", "b"], list("cdefg")),
    ],
)
def test_push(capacity, overflow, pushes, returns, final):
    queue = BoundedQueue(capacity, overflow=overflow)
    assert [queue.push(item) for item in pushes] == returns
    assert queue.items == final


def test_push_overflow_error():
    queue = make_queue(2, ["x", "y"])
    with pytest.raises(OverflowError):
        queue.push("z")
    assert queue.items == ["x", "y"]


class TestPopPeek(unittest.TestCase):
    def test_fifo_order(self):
        queue = make_queue(3, [1, 2, 3])
        self.assertEqual(queue.peek(), 1)
        self.assertEqual(queue.pop(), 1)
        self.assertEqual(queue.peek(), 2)
        self.assertEqual(queue.pop(), 2)
        self.assertEqual(queue.pop(), 3)
        self.assertEqual(len(queue), 0)

    def test_empty(self):
        queue = BoundedQueue(2)
        self.assertIsNone(queue.peek())
        self.assertEqual(queue.peek(default="nothing"), "nothing")
        with self.assertRaises(IndexError):
            queue.pop()

    def test_pop_after_drop(self):
        queue = make_queue(2, ["a", "b", "c", "d"], overflow="drop_oldest")
        self.assertEqual(queue.pop(), "c")
        self.assertEqual(queue.peek(0), "d")
        self.assertEqual(queue.pop(), "d")
        with self.assertRaises(IndexError):
            queue.pop()

    def test_none_items(self):
        queue = make_queue(2, [None, 0])
        self.assertIsNone(queue.peek("default"))
        self.assertIsNone(queue.pop())
        self.assertEqual(queue.pop(), 0)


@pytest.mark.parametrize(
    ("capacity", "overflow", "start", "incoming", "dropped", "final"),
    [
        (4, "error", [], [1, 2, 3], [], [1, 2, 3]),
        (4, "error", [1], [2, 3, 4], [], [1, 2, 3, 4]),
        (3, "drop_oldest", [1, 2], [3, 4, 5], [1, 2], [3, 4, 5]),
        (2, "drop_oldest", [], "abcde", ["a", "b", "c"], ["d", "e"]),
        (2, "drop_oldest", [None], [None, None], [None], [None, None]),
        (3, "error", [], [], [], []),
        (1, "drop_oldest", [9], iter([8, 7]), [9, 8], [7]),
        (5, "drop_oldest", [1.0], (2.0, 3.0), [], [1.0, 2.0, 3.0]),
    ],
)
def test_extend(capacity, overflow, start, incoming, dropped, final):
    queue = make_queue(capacity, start, overflow=overflow)
    assert queue.extend(incoming) == dropped
    assert queue.items == final


def test_extend_overflow_is_atomic():
    queue = make_queue(3, [1, 2])
    with pytest.raises(OverflowError):
        queue.extend([3, 4])
    assert queue.items == [1, 2]


@pytest.mark.parametrize(
    ("capacity", "start", "new_capacity", "dropped", "final"),
    [
        (4, [1, 2, 3, 4], 2, [1, 2], [3, 4]),
        (4, [1, 2], 3, [], [1, 2]),
        (2, [1, 2], 5, [], [1, 2]),
        (3, [], 1, [], []),
        (5, list("abcde"), 1, list("abcd"), ["e"]),
        (3, [None, None, None], 2, [None], [None, None]),
        (2, [1, 2], 2, [], [1, 2]),
        (6, [0.1, 0.2, 0.3], 2, [0.1], [0.2, 0.3]),
    ],
)
def test_resize(capacity, start, new_capacity, dropped, final):
    queue = make_queue(capacity, start)
    assert queue.resize(new_capacity) == dropped
    assert queue.items == final
    assert queue.capacity == new_capacity


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3"])
def test_resize_rejects(bad):
    queue = make_queue(3, [1, 2])
    with pytest.raises(ValueError):
        queue.resize(bad)
    assert (queue.capacity, queue.items) == (3, [1, 2])


@pytest.mark.parametrize(
    ("start", "limit", "taken", "left"),
    [
        ([1, 2, 3], None, [1, 2, 3], []),
        ([1, 2, 3], 2, [1, 2], [3]),
        ([1, 2, 3], 0, [], [1, 2, 3]),
        ([1, 2, 3], 10, [1, 2, 3], []),
        ([], None, [], []),
        ([], 3, [], []),
        (["a"], 1, ["a"], []),
        ([None, 0, ""], 2, [None, 0], [""]),
    ],
)
def test_drain(start, limit, taken, left):
    queue = make_queue(5, start)
    assert queue.drain(limit) == taken
    assert queue.items == left


def test_drain_rejects_negative_limit():
    with pytest.raises(ValueError):
        make_queue(2, [1]).drain(-1)


def test_queue_constructor_checks():
    with pytest.raises(ValueError):
        BoundedQueue(0)
    with pytest.raises(ValueError):
        BoundedQueue(3, overflow="block")


def make_inventory():
    inventory = Inventory()
    inventory.add("bolt", 100, 0.25)
    inventory.add("nut", 40, 0.1)
    inventory.add("gear", 3, 12.5)
    return inventory


@pytest.mark.parametrize(
    ("name", "quantity", "price", "expected_qty", "expected_price"),
    [
        ("bolt", 10, None, 110, 0.25),
        ("bolt", 1, 0.3, 101, 0.3),
        ("washer", 500, 0.01, 500, 0.01),
        ("gear", 2, 0, 5, 0),
        ("spring", 1, 2, 1, 2),
        ("nut", 60, None, 100, 0.1),
        ("axle", 7, 19.99, 7, 19.99),
        ("gear", 10**6, None, 10**6 + 3, 12.5),
    ],
)
def test_inventory_add(name, quantity, price, expected_qty, expected_price):
    inventory = make_inventory()
    assert inventory.add(name, quantity, price) == expected_qty
    assert inventory.quantities[name] == expected_qty
    assert inventory.prices[name] == expected_price


@pytest.mark.parametrize(
    ("name", "quantity", "price"),
    [("bolt", 0, None), ("bolt", -3, None), ("bolt", 1.5, None), ("new", 1, None),
     ("bolt", 1, -0.5)],
)
def test_inventory_add_rejects(name, quantity, price):
    inventory = make_inventory()
    with pytest.raises(ValueError):
        inventory.add(name, quantity, price)
    assert inventory == make_inventory()


@pytest.mark.parametrize(
    ("name", "quantity", "left"),
    [("bolt", 10, 90), ("bolt", 100, 0), ("nut", 1, 39), ("gear", 3, 0), ("gear", 2, 1),
     ("nut", 39, 1)],
)
def test_inventory_remove(name, quantity, left):
    inventory = make_inventory()
    assert inventory.remove(name, quantity) == left
    assert inventory.quantities.get(name, 0) == left
    assert (name in inventory.prices) is (left > 0)


@pytest.mark.parametrize(
    ("name", "quantity", "error"),
    [("widget", 1, KeyError), ("Bolt", 1, KeyError), ("bolt", 101, ValueError),
     ("gear", 0, ValueError), ("nut", -1, ValueError), ("", 1, KeyError)],
)
def test_inventory_remove_rejects(name, quantity, error):
    inventory = make_inventory()
    with pytest.raises(error):
        inventory.remove(name, quantity)
    assert inventory == make_inventory()


def test_total_value():
    inventory = make_inventory()
    assert inventory.total_value() == 66.5
    assert Inventory().total_value() == 0.0
    inventory.remove("gear", 3)
    assert inventory.total_value() == 29.0
    inventory.add("dust", 3, 0.001)
    assert inventory.total_value() == 29.0
    inventory.add("dust", 7)
    assert inventory.total_value() == 29.01
    inventory.add("pin", 7, 1 / 3)
    assert inventory.total_value() == 31.34
    assert Inventory.from_lines(["nut, 4, 0.10", "gear, 2, 3.333"]).total_value() == 7.07


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [(0, []), (3, []), (4, ["gear"]), (41, ["gear", "nut"]), (101, ["gear", "nut", "bolt"]),
     (1000, ["gear", "nut", "bolt"]), (40, ["gear"])],
)
def test_low_stock(threshold, expected):
    assert make_inventory().low_stock(threshold) == expected


def test_low_stock_ties_sorted_by_name():
    inventory = Inventory.from_lines(["b,2,1", "a,2,1", "c,1,1"])
    assert inventory.low_stock(5) == ["c", "a", "b"]
    with pytest.raises(ValueError):
        inventory.low_stock(-1)


@pytest.mark.parametrize(
    ("levels", "added", "quantities"),
    [
        ({"bolt": 150}, {"bolt": 50}, {"bolt": 150, "nut": 40, "gear": 3}),
        ({"bolt": 50}, {}, {"bolt": 100, "nut": 40, "gear": 3}),
        ({}, {}, {"bolt": 100, "nut": 40, "gear": 3}),
        ({"gear": 10, "nut": 40}, {"gear": 7}, {"bolt": 100, "nut": 40, "gear": 10}),
        ({"nut": 41, "gear": 4, "bolt": 101}, {"nut": 1, "gear": 1, "bolt": 1},
         {"bolt": 101, "nut": 41, "gear": 4}),
        ({"gear": 0}, {}, {"bolt": 100, "nut": 40, "gear": 3}),
    ],
)
def test_restock(levels, added, quantities):
    inventory = make_inventory()
    assert inventory.restock(levels) == added
    assert inventory.quantities == quantities


def test_restock_unknown_item():
    inventory = make_inventory()
    with pytest.raises(KeyError):
        inventory.restock({"bolt": 200, "zzz": 1, "aaa": 2})
    assert inventory == make_inventory()


@pytest.mark.parametrize(
    ("lines", "quantities", "prices"),
    [
        (["bolt, 100, 0.25", "nut,40,0.1"], {"bolt": 100, "nut": 40}, {"bolt": 0.25, "nut": 0.1}),
        ([], {}, {}),
        (["# header", "", "  ", "gear, 3, 12.5  # big ones"], {"gear": 3}, {"gear": 12.5}),
        (["a,1,1", "a,2,3"], {"a": 3}, {"a": 3.0}),
        (("x , 7 , 0",), {"x": 7}, {"x": 0.0}),
        (["pin,5,1e-2"], {"pin": 5}, {"pin": 0.01}),
    ],
)
def test_from_lines(lines, quantities, prices):
    inventory = Inventory.from_lines(lines)
    assert type(inventory) is Inventory
    assert inventory.quantities == quantities
    assert inventory.prices == prices


@pytest.mark.parametrize(
    "lines", [["bolt, 100"], ["a,1,2,3"], ["a,x,1"], ["a,1,y"], ["a,0,1"], ["ok,1,1", "bad"]]
)
def test_from_lines_rejects(lines):
    with pytest.raises(ValueError):
        Inventory.from_lines(lines)


def test_containers_pickle():
    queue = make_queue(3, [1, "two"])
    clone = pickle.loads(pickle.dumps(queue))
    assert (clone.capacity, clone.overflow, clone.items) == (3, "error", [1, "two"])
    assert pickle.loads(pickle.dumps(make_inventory())) == make_inventory()


@pytest.mark.parametrize(
    ("items", "default", "expected"),
    [([1, 2], None, 1), ([], None, None), ([], -1, -1), (["z"], "d", "z"), ([[1, 2]], None, [1, 2]),
     ([0.0, 1.0], 5, 0.0), ([False], True, False)],
)
def test_peek(items, default, expected):
    queue = make_queue(3, items)
    assert queue.peek(default) == expected
    assert queue.items == items


@pytest.mark.parametrize(
    ("lines", "value"),
    [([], 0.0), (["a,1,1"], 1.0), (["a,3,0.1"], 0.3), (["a,2,0.005"], 0.01), (["a,1,0.125"], 0.12),
     (["a,10,19.99", "b,3,0.333"], 200.9), (["a,1000000,0.07"], 70000.0), (["a,1,0"], 0.0)],
)
def test_total_value_of_lines(lines, value):
    assert Inventory.from_lines(lines).total_value() == value


@pytest.mark.parametrize(
    ("levels", "error"),
    [({"gear": 5, "missing": 1}, KeyError), ({"": 3}, KeyError), ({"b": 1, "a": 1}, KeyError)],
)
def test_restock_errors(levels, error):
    with pytest.raises(error):
        make_inventory().restock(levels)
