-- Items: a title and nothing else.
CREATE TABLE items (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL
) STRICT;
