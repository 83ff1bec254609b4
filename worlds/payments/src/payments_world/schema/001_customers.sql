-- Customers of the merchant. A deleted customer keeps its row, because its
-- charges still point at it; deleted_at says it is gone.
CREATE TABLE customers (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    name TEXT,
    description TEXT,
    -- A JSON object of string pairs, keys sorted, written by the tools.
    metadata TEXT NOT NULL,
    default_payment_method_id TEXT REFERENCES payment_methods (id),
    -- Timestamps are written by the tools from the instance clock.
    created_at TEXT NOT NULL,
    deleted_at TEXT
) STRICT;

CREATE INDEX customers_newest_first ON customers (created_at, id);
CREATE INDEX customers_by_email ON customers (email);
