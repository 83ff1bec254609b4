-- The airline's customers. Saved passengers are a list nothing changes, kept as JSON;
-- `reservations` is the customer's list of reservation ids, in the order they were
-- made, which a booking appends to.
CREATE TABLE users (
    user_id TEXT PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    address1 TEXT NOT NULL,
    address2 TEXT,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    state TEXT NOT NULL,
    zip TEXT NOT NULL,
    email TEXT NOT NULL,
    dob TEXT NOT NULL,
    membership TEXT NOT NULL CHECK (membership IN ('gold', 'silver', 'regular')),
    saved_passengers TEXT NOT NULL
        CHECK (json_valid(saved_passengers) AND json_type(saved_passengers) = 'array'),
    reservations TEXT NOT NULL
        CHECK (json_valid(reservations) AND json_type(reservations) = 'array')
) STRICT;

-- A customer's saved payment methods, in the order the benchmark lists them.
-- Gift cards and travel certificates carry an amount in dollars; a booking paid
-- with a certificate removes it, and send_certificate adds one.
CREATE TABLE payment_methods (
    user_id TEXT NOT NULL REFERENCES users (user_id),
    id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('credit_card', 'gift_card', 'certificate')),
    brand TEXT,
    last_four TEXT,
    amount REAL,
    position INTEGER NOT NULL,
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, position),
    CHECK ((source = 'credit_card') = (brand IS NOT NULL AND last_four IS NOT NULL)),
    CHECK ((source = 'credit_card') = (amount IS NULL))
) STRICT;
