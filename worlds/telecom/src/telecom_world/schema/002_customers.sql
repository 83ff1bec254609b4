-- Customers, with their address as columns, the ids of their lines and bills as JSON
-- lists in the benchmark's order (a new bill is appended), and their saved payment
-- methods as rows numbered by position.
CREATE TABLE customers (
    customer_id TEXT PRIMARY KEY,
    full_name TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    email TEXT NOT NULL,
    phone_number TEXT NOT NULL,
    street TEXT NOT NULL,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    zip_code TEXT NOT NULL,
    account_status TEXT NOT NULL
        CHECK (account_status IN ('Active', 'Suspended', 'Pending Verification', 'Closed')),
    line_ids TEXT NOT NULL CHECK (json_valid(line_ids) AND json_type(line_ids) = 'array'),
    bill_ids TEXT NOT NULL CHECK (json_valid(bill_ids) AND json_type(bill_ids) = 'array'),
    -- A UTC instant; shown to the agent in the benchmark's EST wall time.
    created_at TEXT NOT NULL,
    last_extension_date TEXT,
    goodwill_credit_used_this_year REAL NOT NULL,
    position INTEGER NOT NULL
) STRICT;

CREATE TABLE payment_methods (
    customer_id TEXT NOT NULL REFERENCES customers (customer_id),
    position INTEGER NOT NULL,
    method_type TEXT NOT NULL CHECK (method_type IN ('Credit Card', 'Debit Card', 'PayPal')),
    account_number_last_4 TEXT NOT NULL,
    expiration_date TEXT NOT NULL,
    PRIMARY KEY (customer_id, position)
) STRICT;
