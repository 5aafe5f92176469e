"""Stateful containers: a bounded FIFO queue and a stock inventory."""

_OVERFLOW_POLICIES = ("error", "drop_oldest")


class BoundedQueue:
    """A first-in first-out queue holding at most ``capacity`` items.

    When full, ``push`` either raises ``OverflowError`` (policy ``"error"``) or drops the oldest
    item (policy ``"drop_oldest"``).
    """

    def __init__(self, capacity, overflow="error"):
        if not isinstance(capacity, int) or capacity < 1:
            raise ValueError("capacity must be a positive int")
        if overflow not in _OVERFLOW_POLICIES:
            raise ValueError(f"unknown overflow policy {overflow!r}")
        self.capacity = capacity
        self.overflow = overflow
        self.items = []

    def __repr__(self):
        return f"BoundedQueue({self.capacity}, items={self.items!r})"

    def __len__(self):
        return len(self.items)

    def push(self, item):
        """Append ``item``; return the item dropped to make room, or None.

        >>> q = BoundedQueue(2, overflow="drop_oldest")
        >>> q.push("a"), q.push("b"), q.push("c"), q.items
        (None, None, 'a', ['b', 'c'])
        """
        dropped = None
        if len(self.items) >= self.capacity:
            if self.overflow == "error":
                raise OverflowError(f"queue is full ({self.capacity} items)")
            dropped = self.items.pop(0)
        self.items.append(item)
        return dropped

    def pop(self):
        """Remove and return the oldest item; ``IndexError`` when empty."""
        if not self.items:
            raise IndexError("pop from an empty queue")
        item = self.items[0]
        del self.items[0]
        return item

    def peek(self, default=None):
        """Return the oldest item without removing it, or ``default`` when empty."""
        if not self.items:
            return default
        oldest = self.items[0]
        return oldest

    def extend(self, items):
        """Push every item in turn; return the list of items dropped on the way.

        With policy ``"error"`` nothing is pushed if the items do not all fit.
        """
        incoming = list(items)
        if self.overflow == "error" and len(self.items) + len(incoming) > self.capacity:
            raise OverflowError(f"{len(incoming)} items do not fit")
        dropped = []
        for item in incoming:
            was_full = len(self.items) >= self.capacity
            removed = self.push(item)
            if was_full:
                dropped.append(removed)
        return dropped

    def resize(self, new_capacity):
        """Change the capacity; when shrinking, drop the oldest items and return them.

        >>> q = BoundedQueue(4)
        >>> q.extend([1, 2, 3, 4])
        []
        >>> q.resize(2), q.items, q.capacity
        ([1, 2], [3, 4], 2)
        """
        if not isinstance(new_capacity, int) or new_capacity < 1:
            raise ValueError("capacity must be a positive int")
        excess = max(0, len(self.items) - new_capacity)
        dropped = self.items[:excess]
        self.items = self.items[excess:]
        self.capacity = new_capacity
        return dropped

    def drain(self, limit=None):
        """Pop up to ``limit`` items (all when None) and return them oldest first."""
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0")
        count = len(self.items) if limit is None else min(limit, len(self.items))
        taken = self.items[:count]
        self.items = self.items[count:]
        return taken


class Inventory:
    """Stock levels and unit prices by item name."""

    def __init__(self):
        self.quantities = {}
        self.prices = {}

    def __repr__(self):
        return f"Inventory({self.quantities!r})"

    def __eq__(self, other):
        if not isinstance(other, Inventory):
            return NotImplemented
        return (self.quantities, self.prices) == (other.quantities, other.prices)

    def add(self, name, quantity, unit_price=None):
        """Add ``quantity`` of ``name``, setting its price if given; return the new quantity.

        A new item needs a price.

        >>> inv = Inventory()
        >>> inv.add("bolt", 10, 0.25), inv.add("bolt", 5)
        (10, 15)
        """
        if not isinstance(quantity, int) or quantity <= 0:
            raise ValueError("quantity must be a positive int")
        if unit_price is None and name not in self.prices:
            raise ValueError(f"new item {name!r} needs a unit price")
        if unit_price is not None:
            if unit_price < 0:
                raise ValueError("unit price must not be negative")
            self.prices[name] = unit_price
        self.quantities[name] = self.quantities.get(name, 0) + quantity
        return self.quantities[name]

    def remove(self, name, quantity):
        """Take ``quantity`` of ``name`` out of stock and return what is left.

        Unknown items raise ``KeyError``; taking more than is in stock raises ``ValueError``.
        An item whose stock reaches zero is forgotten, price included.
        """
        if name not in self.quantities:
            raise KeyError(name)
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        left = self.quantities[name] - quantity
        if left < 0:
            raise ValueError(f"only {self.quantities[name]} {name!r} in stock")
        if left == 0:
            del self.quantities[name]
            del self.prices[name]
        else:
            self.quantities[name] = left
        return left

    def total_value(self):
        """Value of the whole stock, rounded to cents.

        >>> inv = Inventory.from_lines(["nut, 4, 0.10", "gear, 2, 3.333"])
        >>> inv.total_value()
        7.07
        """
        total = 0.0
        for name in sorted(self.quantities):
            total += self.quantities[name] * self.prices[name]
        return round(total, 2)

    def low_stock(self, threshold):
        """Names of items with fewer than ``threshold`` units, sorted by quantity then name."""
        if threshold < 0:
            raise ValueError("threshold must not be negative")
        low = [(qty, name) for name, qty in self.quantities.items() if qty < threshold]
        low.sort()
        return [name for _, name in low]

    def restock(self, levels):
        """Raise stock to the target ``levels`` (name -> quantity); return what was added.

        Items already at or above their level are left alone and not reported.
        """
        unknown = sorted(name for name in levels if name not in self.quantities)
        if unknown:
            raise KeyError(unknown[0])
        added = {}
        for name, level in levels.items():
            missing = level - self.quantities[name]
            if missing > 0:
                self.quantities[name] += missing
                added[name] = missing
        return added

    @classmethod
    def from_lines(cls, lines):
        """Build an inventory from ``"name, quantity, unit_price"`` lines; ``#`` starts a comment."""
        inventory = cls()
        for number, line in enumerate(lines, start=1):
            content = line.split("#", 1)[0].strip()
            if not content:
                continue
            fields = [field.strip() for field in content.split(",")]
            if len(fields) != 3:
                raise ValueError(f"line {number}: expected 3 fields, got {len(fields)}")
            inventory.add(fields[0], int(fields[1]), float(fields[2]))
        return inventory
