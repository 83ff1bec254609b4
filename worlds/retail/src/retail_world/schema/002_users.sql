-- The store's customers, in the benchmark's order (lookups by name or email return the
-- first that matches). `orders` is the customer's list of order ids, which no tool changes.
CREATE TABLE users (
    user_id TEXT PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    address1 TEXT NOT NULL,
    address2 TEXT NOT NULL,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    state TEXT NOT NULL,
    zip TEXT NOT NULL,
    email TEXT NOT NULL,
    orders TEXT NOT NULL CHECK (json_valid(orders) AND json_type(orders) = 'array'),
    position INTEGER NOT NULL UNIQUE
) STRICT;

-- A customer's saved payment methods, in the order the benchmark lists them. A gift
-- card has a balance in dollars, which refunds raise and payments lower.
CREATE TABLE payment_methods (
    user_id TEXT NOT NULL REFERENCES users (user_id),
    id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('credit_card', 'gift_card', 'paypal')),
    brand TEXT,
    last_four TEXT,
    balance REAL,
    position INTEGER NOT NULL,
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, position),
    CHECK ((source = 'credit_card') = (brand IS NOT NULL AND last_four IS NOT NULL)),
    CHECK ((source = 'gift_card') = (balance IS NOT NULL))
) STRICT;
