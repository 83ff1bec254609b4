-- The ledger. Every movement of the merchant's money is one row, and the
-- balance is the sum of net: available once available_on has passed, pending
-- until then.
CREATE TABLE balance_transactions (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL CHECK (type IN ('charge', 'refund', 'payout', 'payout_cancel')),
    -- The charge, refund or payout that moved the money.
    source_id TEXT NOT NULL,
    amount INTEGER NOT NULL,
    fee INTEGER NOT NULL CHECK (fee >= 0),
    net INTEGER NOT NULL CHECK (net = amount - fee),
    currency TEXT NOT NULL CHECK (length(currency) = 3),
    description TEXT,
    created_at TEXT NOT NULL,
    available_on TEXT NOT NULL
) STRICT;

CREATE INDEX balance_transactions_newest_first ON balance_transactions (created_at, id);
CREATE INDEX balance_transactions_by_source ON balance_transactions (source_id);
CREATE INDEX balance_transactions_by_currency ON balance_transactions (currency, available_on);
