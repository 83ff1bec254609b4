-- The merchant's own bank accounts, and the payouts sent to them.
CREATE TABLE bank_accounts (
    id TEXT PRIMARY KEY,
    currency TEXT NOT NULL CHECK (length(currency) = 3),
    account_holder_name TEXT NOT NULL,
    routing_number TEXT,
    last4 TEXT NOT NULL CHECK (length(last4) = 4),
    default_for_currency INTEGER NOT NULL CHECK (default_for_currency IN (0, 1)),
    created_at TEXT NOT NULL
) STRICT;

-- At most one default bank account per currency.
CREATE UNIQUE INDEX bank_accounts_one_default
    ON bank_accounts (currency) WHERE default_for_currency = 1;
CREATE INDEX bank_accounts_newest_first ON bank_accounts (created_at, id);

CREATE TABLE payouts (
    id TEXT PRIMARY KEY,
    bank_account_id TEXT NOT NULL REFERENCES bank_accounts (id),
    amount INTEGER NOT NULL CHECK (amount > 0),
    currency TEXT NOT NULL CHECK (length(currency) = 3),
    status TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'canceled')),
    -- The UTC date the money is due at the bank, YYYY-MM-DD.
    arrival_date TEXT NOT NULL,
    description TEXT,
    balance_transaction_id TEXT NOT NULL REFERENCES balance_transactions (id),
    created_at TEXT NOT NULL,
    canceled_at TEXT
) STRICT;

CREATE INDEX payouts_newest_first ON payouts (created_at, id);
CREATE INDEX payouts_by_status ON payouts (status, created_at, id);
