-- Orders, with their items and payments as rows of their own, each numbered by its
-- position in the order's list: modifying an item, or a refund, is a change to that row.
-- Fulfilments (tracking ids per shipment) are a list nothing changes, kept as JSON; the
-- exchange and return requests keep their item lists as JSON arrays.
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    address1 TEXT NOT NULL,
    address2 TEXT NOT NULL,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    state TEXT NOT NULL,
    zip TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('processed', 'pending', 'pending (item modified)',
        'delivered', 'cancelled', 'exchange requested', 'return requested')),
    fulfillments TEXT NOT NULL
        CHECK (json_valid(fulfillments) AND json_type(fulfillments) = 'array'),
    cancel_reason TEXT
        CHECK (cancel_reason IS NULL OR cancel_reason IN ('no longer needed', 'ordered by mistake')),
    exchange_items TEXT
        CHECK (exchange_items IS NULL OR json_type(exchange_items) = 'array'),
    exchange_new_items TEXT
        CHECK (exchange_new_items IS NULL OR json_type(exchange_new_items) = 'array'),
    exchange_payment_method_id TEXT,
    exchange_price_difference REAL,
    return_items TEXT CHECK (return_items IS NULL OR json_type(return_items) = 'array'),
    return_payment_method_id TEXT
) STRICT;

CREATE TABLE order_items (
    order_id TEXT NOT NULL REFERENCES orders (order_id),
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    product_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    price REAL NOT NULL,
    options TEXT NOT NULL CHECK (json_valid(options) AND json_type(options) = 'object'),
    PRIMARY KEY (order_id, position)
) STRICT;

CREATE TABLE order_payments (
    order_id TEXT NOT NULL REFERENCES orders (order_id),
    position INTEGER NOT NULL,
    transaction_type TEXT NOT NULL CHECK (transaction_type IN ('payment', 'refund')),
    amount REAL NOT NULL,
    payment_method_id TEXT NOT NULL,
    PRIMARY KEY (order_id, position)
) STRICT;
