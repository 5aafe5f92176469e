# attempt: correct — computes the new balance first, then records it
def withdraw(self, amount):
    """Take ``amount`` cents out and return the new balance."""
    _check_amount(amount)
    new_balance = self.balance - amount
    if new_balance + self.overdraft_limit < 0:
        raise ValueError("insufficient funds")
    self.history.append(("withdraw", amount))
    self.balance = new_balance
    return new_balance
