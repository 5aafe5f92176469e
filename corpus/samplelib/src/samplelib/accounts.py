"""A small bank account model that keeps money as integer cents."""

from decimal import ROUND_HALF_EVEN, Decimal


def _check_amount(amount):
    if not isinstance(amount, int) or isinstance(amount, bool):
        raise TypeError(f"amount must be an int number of cents, got {type(amount).__name__}")
    if amount <= 0:
        raise ValueError("amount must be positive")
    return amount


class Account:
    """A bank account: an owner, a balance in cents, an overdraft limit and a history.

    The history is a list of ``(kind, cents)`` tuples, newest last.
    """

    def __init__(self, owner, balance=0, overdraft_limit=0):
        if balance < -overdraft_limit:
            raise ValueError("opening balance is below the overdraft limit")
        self.owner = owner
        self.balance = balance
        self.overdraft_limit = overdraft_limit
        self.history = []

    def __repr__(self):
        return f"Account({self.owner!r}, balance={self.balance})"

    def __eq__(self, other):
        if not isinstance(other, Account):
            return NotImplemented
        return vars(self) == vars(other)

    def deposit(self, amount):
        """Add ``amount`` cents and return the new balance.

        >>> acct = Account("ann")
        >>> acct.deposit(250), acct.history
        (250, [('deposit', 250)])
        """
        _check_amount(amount)
        self.balance += amount
        self.history.append(("deposit", amount))
        return self.balance

    def withdraw(self, amount):
        """Take ``amount`` cents out and return the new balance.

        The balance may go down to ``-overdraft_limit``; beyond that the withdrawal is refused
        with a ``ValueError`` and nothing changes.
        """
        _check_amount(amount)
        if self.balance - amount < -self.overdraft_limit:
            raise ValueError(f"insufficient funds: balance {self.balance}, asked {amount}")
        self.balance -= amount
        self.history.append(("withdraw", amount))
        return self.balance

    def transfer_to(self, other, amount):
        """Move ``amount`` cents to ``other``; both histories record the transfer.

        Returns the pair of new balances ``(self.balance, other.balance)``.
        """
        if not isinstance(other, Account):
            raise TypeError("can only transfer to another Account")
        if other is self:
            raise ValueError("cannot transfer to the same account")
        _check_amount(amount)
        if self.balance - amount < -self.overdraft_limit:
            raise ValueError("insufficient funds for transfer")
        self.balance -= amount
        other.balance += amount
        self.history.append(("transfer_out", amount))
        other.history.append(("transfer_in", amount))
        return self.balance, other.balance

    def apply_interest(self, rate_percent):
        """Credit interest on a positive balance, rounded half-even to whole cents.

        Returns the interest credited (0 for a balance <= 0 or a rate that rounds to nothing).

        >>> acct = Account("bo", balance=1050)
        >>> acct.apply_interest(5), acct.balance
        (52, 1102)
        """
        if rate_percent < 0:
            raise ValueError("rate must not be negative")
        if self.balance <= 0:
            return 0
        raw = Decimal(self.balance) * Decimal(str(rate_percent)) / Decimal(100)
        interest = int(raw.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
        if interest:
            self.balance += interest
            self.history.append(("interest", interest))
        return interest

    def statement(self):
        """Lines describing the history, then the closing balance, amounts as money.

        >>> acct = Account("cy", balance=1000)
        >>> acct.withdraw(1250)
        Traceback (most recent call last):
        ...
        ValueError: insufficient funds: balance 1000, asked 1250
        >>> acct.deposit(99)
        1099
        >>> acct.statement()
        ['deposit           0.99', 'balance          10.99']
        """
        lines = []
        for kind, cents in self.history:
            sign = "-" if kind in ("withdraw", "transfer_out") else ""
            lines.append(f"{kind:<12}{sign + Account.format_cents(cents):>10}")
        lines.append(f"{'balance':<12}{Account.format_cents(self.balance):>10}")
        return lines

    @classmethod
    def from_record(cls, record):
        """Build an account from ``"owner:balance[:overdraft]"`` with money amounts.

        >>> Account.from_record("dee:12.50:100")
        Account('dee', balance=1250)
        """
        parts = [part.strip() for part in record.split(":")]
        if len(parts) not in (2, 3) or not parts[0]:
            raise ValueError(f"malformed account record {record!r}")
        balance = cls.parse_amount(parts[1])
        overdraft = cls.parse_amount(parts[2]) if len(parts) == 3 else 0
        if overdraft < 0:
            raise ValueError("overdraft limit must not be negative")
        return cls(parts[0], balance=balance, overdraft_limit=overdraft)

    @staticmethod
    def parse_amount(text):
        """Parse a money string like ``"12.5"``, ``"-3"`` or ``"1,000.25"`` into cents.

        >>> Account.parse_amount("1,000.25"), Account.parse_amount("-0.5")
        (100025, -50)
        """
        cleaned = text.strip().replace(",", "")
        negative = cleaned.startswith("-")
        whole, _, fraction = cleaned.lstrip("+-").partition(".")
        if not whole.isdigit() and not (whole == "" and fraction.isdigit()):
            raise ValueError(f"not an amount: {text!r}")
        if len(fraction) > 2 or (fraction and not fraction.isdigit()):
            raise ValueError(f"too many or bad decimals in {text!r}")
        cents = int(whole or "0") * 100 + int(fraction.ljust(2, "0") or "0")
        return -cents if negative else cents

    @staticmethod
    def format_cents(cents):
        """Format an integer number of cents as money: ``-1234 -> '-12.34'``.

        >>> Account.format_cents(5), Account.format_cents(-1234)
        ('0.05', '-12.34')
        """
        sign = "-" if cents < 0 else ""
        units, rest = divmod(abs(cents), 100)
        return f"{sign}{units}.{rest:02d}"
