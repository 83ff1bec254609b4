-- Cards saved on a customer, made from a test token. Detaching keeps the row,
-- because charges made with the card still point at it.
CREATE TABLE payment_methods (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers (id),
    type TEXT NOT NULL CHECK (type = 'card'),
    token TEXT NOT NULL,
    brand TEXT NOT NULL,
    last4 TEXT NOT NULL CHECK (length(last4) = 4),
    exp_month INTEGER NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
    exp_year INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    detached_at TEXT
) STRICT;

CREATE INDEX payment_methods_by_customer ON payment_methods (customer_id, created_at, id);
