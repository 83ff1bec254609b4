-- The store's catalogue: 50 product types, each with its variants ("items"), in the
-- benchmark's order (`position`), which listings and lookups follow.
CREATE TABLE products (
    product_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    position INTEGER NOT NULL UNIQUE
) STRICT;

-- One row per item: its options (color, size, ...) as a JSON object, whether it is in
-- stock, and its price in dollars.
CREATE TABLE variants (
    item_id TEXT PRIMARY KEY,
    product_id TEXT NOT NULL REFERENCES products (product_id),
    options TEXT NOT NULL CHECK (json_valid(options) AND json_type(options) = 'object'),
    available INTEGER NOT NULL CHECK (available IN (0, 1)),
    price REAL NOT NULL,
    position INTEGER NOT NULL,
    UNIQUE (product_id, position)
) STRICT;
