-- Tags on items, with no key: the change log cannot say which row changed.
CREATE TABLE item_tags (
    item_id TEXT NOT NULL,
    tag TEXT NOT NULL
) STRICT;
