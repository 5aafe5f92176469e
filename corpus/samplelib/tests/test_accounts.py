import pickle
import unittest

import pytest

from samplelib.accounts import Account


@pytest.fixture
def funded():
    return Account("ann", balance=10_000)


class TestDeposit(unittest.TestCase):
    def test_deposits_accumulate(self):
        acct = Account("bo")
        self.assertEqual(acct.deposit(250), 250)
        self.assertEqual(acct.deposit(1), 251)
        self.assertEqual(acct.deposit(10**12), 10**12 + 251)
        self.assertEqual(acct.history, [("deposit", 250), ("deposit", 1), ("deposit", 10**12)])

    def test_deposit_into_overdrawn_account(self):
        acct = Account("cy", balance=-500, overdraft_limit=1000)
        self.assertEqual(acct.deposit(200), -300)
        self.assertEqual(acct.deposit(300), 0)

    def test_bad_amounts(self):
        acct = Account("di", balance=5)
        for bad in (0, -1, -250):
            with self.assertRaises(ValueError):
                acct.deposit(bad)
        for bad in (1.5, "10", True, None):
            with self.assertRaises(TypeError):
                acct.deposit(bad)
        self.assertEqual(acct.balance, 5)
        self.assertEqual(acct.history, [])


@pytest.mark.parametrize(
    ("balance", "overdraft", "amount", "new_balance"),
    [
        (10_000, 0, 2_500, 7_500),
        (10_000, 0, 10_000, 0),
        (100, 500, 600, -500),
        (0, 50, 1, -1),
        (-100, 200, 100, -200),
        (1, 0, 1, 0),
        (999_999, 0, 123_456, 876_543),
        (50, 10**6, 10**6, 50 - 10**6),
    ],
)
def test_withdraw(balance, overdraft, amount, new_balance):
    acct = Account("eve", balance=balance, overdraft_limit=overdraft)
    assert acct.withdraw(amount) == new_balance
    assert acct.balance == new_balance
    assert acct.history == [("withdraw", amount)]


@pytest.mark.parametrize(
    ("balance", "overdraft", "amount", "error"),
    [
        (100, 0, 101, ValueError),
        (0, 0, 1, ValueError),
        (100, 50, 151, ValueError),
        (-50, 50, 1, ValueError),
        (100, 0, 0, ValueError),
        (100, 0, -5, ValueError),
        (100, 0, 1.0, TypeError),
        (100, 0, "5", TypeError),
    ],
)
def test_withdraw_refused(balance, overdraft, amount, error):
    acct = Account("fay", balance=balance, overdraft_limit=overdraft)
    with pytest.raises(error):
        acct.withdraw(amount)
    assert acct.balance == balance
    assert acct.history == []


def test_withdraw_after_deposits(funded):
    funded.deposit(500)
    assert funded.withdraw(10_500) == 0
    with pytest.raises(ValueError):
        funded.withdraw(1)
    assert funded.history == [("deposit", 500), ("withdraw", 10_500)]


@pytest.mark.parametrize(
    ("a_balance", "a_overdraft", "b_balance", "amount", "expected"),
    [
        (1000, 0, 0, 400, (600, 400)),
        (1000, 0, 0, 1000, (0, 1000)),
        (0, 500, 10, 500, (-500, 510)),
        (250, 0, -100, 150, (100, 50)),
        (10**9, 0, 10**9, 1, (10**9 - 1, 10**9 + 1)),
        (7, 3, 0, 10, (-3, 10)),
    ],
)
def test_transfer_to(a_balance, a_overdraft, b_balance, amount, expected):
    a = Account("gus", balance=a_balance, overdraft_limit=a_overdraft)
    b = Account("hal", balance=b_balance, overdraft_limit=200)
    assert a.transfer_to(b, amount) == expected
    assert a.history == [("transfer_out", amount)]
    assert b.history == [("transfer_in", amount)]


def test_transfer_errors(funded):
    other = Account("ivy")
    with pytest.raises(ValueError):
        funded.transfer_to(funded, 10)
    with pytest.raises(TypeError):
        funded.transfer_to("ivy", 10)
    with pytest.raises(ValueError):
        funded.transfer_to(other, 10_001)
    with pytest.raises(ValueError):
        funded.transfer_to(other, 0)
    with pytest.raises(TypeError):
        funded.transfer_to(other, 2.5)
    assert (funded.balance, other.balance) == (10_000, 0)


@pytest.mark.parametrize(
    ("balance", "rate", "interest"),
    [
        (1050, 5, 52),
        (1000, 2.5, 25),
        (10, 5, 0),
        (30, 5, 2),
        (50, 5, 2),
        (70, 5, 4),
        (0, 10, 0),
        (-500, 10, 0),
        (123_456, 0.75, 926),
        (100_000, 0, 0),
        (1, 50, 0),
        (3, 50, 2),
    ],
)
def test_apply_interest(balance, rate, interest):
    acct = Account("jo", balance=balance, overdraft_limit=1000)
    assert acct.apply_interest(rate) == interest
    assert acct.balance == balance + interest
    assert acct.history == ([("interest", interest)] if interest else [])


def test_apply_interest_rejects_negative_rate(funded):
    with pytest.raises(ValueError):
        funded.apply_interest(-1)
    assert funded.balance == 10_000


class TestStatement(unittest.TestCase):
    def test_empty_history(self):
        self.assertEqual(Account("ka").statement(), ["balance           0.00"])
        self.assertEqual(Account("ka", balance=-5, overdraft_limit=5).statement(),
                         ["balance          -0.05"])

    def test_mixed_history(self):
        acct = Account("lu", balance=10_000)
        acct.deposit(1234)
        acct.withdraw(99)
        acct.apply_interest(1)
        other = Account("mo")
        acct.transfer_to(other, 5000)
        self.assertEqual(
            acct.statement(),
            [
                "deposit          12.34",
                "withdraw         -0.99",
                "interest          1.11",
                "transfer_out    -50.00",
                "balance          62.46",
            ],
        )
        self.assertEqual(other.statement(), ["transfer_in      50.00", "balance          50.00"])


@pytest.mark.parametrize(
    ("record", "owner", "balance", "overdraft"),
    [
        ("dee:12.50:100", "dee", 1250, 10_000),
        ("ann:0", "ann", 0, 0),
        (" bo : 1,000.05 ", "bo", 100_005, 0),
        ("cy:-3:5", "cy", -300, 500),
        ("ed:.5", "ed", 50, 0),
        ("fi:7:0.01", "fi", 700, 1),
    ],
)
def test_from_record(record, owner, balance, overdraft):
    acct = Account.from_record(record)
    assert type(acct) is Account
    assert (acct.owner, acct.balance, acct.overdraft_limit, acct.history) == (
        owner, balance, overdraft, [])


@pytest.mark.parametrize(
    "record", ["nobody", ":12", "a:1:2:3", "a:abc", "a:1:-5", "a:-10:5", "a:1.234"]
)
def test_from_record_rejects(record):
    with pytest.raises(ValueError):
        Account.from_record(record)


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("12.34", 1234),
        ("12.5", 1250),
        ("12", 1200),
        ("-0.5", -50),
        ("1,000.25", 100_025),
        (" 7.07 ", 707),
        ("+3", 300),
        (".99", 99),
        ("0", 0),
        ("1.", 100),
    ],
)
def test_parse_amount(text, cents):
    assert Account.parse_amount(text) == cents


@pytest.mark.parametrize("text", ["", "-", "abc", "1.234", "1.2.3", "1.a", "1e3", "--5 5"])
def test_parse_amount_rejects(text):
    with pytest.raises(ValueError):
        Account.parse_amount(text)


@pytest.mark.parametrize(
    ("cents", "text"),
    [(5, "0.05"), (-1234, "-12.34"), (0, "0.00"), (100, "1.00"), (-1, "-0.01"),
     (123_456_789, "1234567.89"), (99, "0.99"), (-100, "-1.00")],
)
def test_format_cents(cents, text):
    assert Account.format_cents(cents) == text


def test_accounts_pickle_roundtrip(funded):
    funded.deposit(5)
    clone = pickle.loads(pickle.dumps(funded))
    assert clone == funded
    assert clone is not funded


def test_constructor_rejects_balance_below_overdraft():
    with pytest.raises(ValueError):
        Account("x", balance=-10)
    assert Account("x", balance=-10, overdraft_limit=10).balance == -10


def _run(acct, operations):
    for name, amount in operations:
        getattr(acct, name)(amount)
    return acct


@pytest.mark.parametrize(
    ("balance", "operations", "lines"),
    [
        (0, [("deposit", 1)], ["deposit           0.01", "balance           0.01"]),
        (500, [("withdraw", 500)], ["withdraw         -5.00", "balance           0.00"]),
        (100, [("apply_interest", 50)], ["interest          0.50", "balance           1.50"]),
        (10**7, [("withdraw", 1), ("deposit", 2)],
         ["withdraw         -0.01", "deposit           0.02", "balance      100000.01"]),
        (10**9, [("deposit", 10**9)],
         ["deposit     10000000.00", "balance     20000000.00"]),
        (0, [("deposit", 99), ("deposit", 1), ("withdraw", 100)],
         ["deposit           0.99", "deposit           0.01", "withdraw         -1.00",
          "balance           0.00"]),
    ],
)
def test_statement_lines(balance, operations, lines):
    acct = _run(Account("st", balance=balance), operations)
    assert acct.statement() == lines
