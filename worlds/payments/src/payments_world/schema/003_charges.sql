-- One attempt to take money from a card. A declined attempt is a charge too,
-- with status 'failed' and the issuer's reason.
CREATE TABLE charges (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers (id),
    payment_method_id TEXT NOT NULL REFERENCES payment_methods (id),
    -- The authorised amount, in the currency's minor unit.
    amount INTEGER NOT NULL CHECK (amount > 0),
    amount_captured INTEGER NOT NULL CHECK (amount_captured BETWEEN 0 AND amount),
    amount_refunded INTEGER NOT NULL CHECK (amount_refunded BETWEEN 0 AND amount_captured),
    currency TEXT NOT NULL CHECK (length(currency) = 3),
    status TEXT NOT NULL CHECK (
        status IN (
            'requires_capture', 'succeeded', 'partially_refunded', 'refunded', 'failed', 'canceled'
        )
    ),
    failure_code TEXT,
    failure_message TEXT,
    description TEXT,
    metadata TEXT NOT NULL,
    -- The ledger entry the capture wrote; NULL until the charge is captured.
    balance_transaction_id TEXT REFERENCES balance_transactions (id),
    created_at TEXT NOT NULL,
    captured_at TEXT,
    canceled_at TEXT
) STRICT;

CREATE INDEX charges_newest_first ON charges (created_at, id);
CREATE INDEX charges_by_customer ON charges (customer_id, created_at, id);
CREATE INDEX charges_by_status ON charges (status, created_at, id);
