-- Money returned to the card a charge was captured from.
CREATE TABLE refunds (
    id TEXT PRIMARY KEY,
    charge_id TEXT NOT NULL REFERENCES charges (id),
    amount INTEGER NOT NULL CHECK (amount > 0),
    currency TEXT NOT NULL CHECK (length(currency) = 3),
    reason TEXT CHECK (reason IN ('duplicate', 'fraudulent', 'requested_by_customer')),
    status TEXT NOT NULL CHECK (status = 'succeeded'),
    balance_transaction_id TEXT NOT NULL REFERENCES balance_transactions (id),
    created_at TEXT NOT NULL
) STRICT;

CREATE INDEX refunds_newest_first ON refunds (created_at, id);
CREATE INDEX refunds_by_charge ON refunds (charge_id, created_at, id);
