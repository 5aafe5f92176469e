# attempt: partial — an unknown item raises ValueError instead of KeyError
def remove(self, name, quantity):
    """Take ``quantity`` of ``name`` out of stock and return what is left."""
    if quantity <= 0:
        raise ValueError("quantity must be positive")
    in_stock = self.quantities.get(name)
    if in_stock is None:
        raise ValueError(f"no such item: {name}")
    if quantity > in_stock:
        raise ValueError("not enough in stock")
    left = in_stock - quantity
    if left:
        self.quantities[name] = left
    else:
        self.quantities.pop(name)
        self.prices.pop(name)
    return left
