-- Full-text search over item titles: a virtual table, exempt from STRICT.
CREATE VIRTUAL TABLE item_search USING fts5(title);
-- A string that merely contains the word is not the clock: 'right now'.
CREATE TABLE notes (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL DEFAULT 'written right now',
    tag TEXT NOT NULL CHECK (tag <> 'later')
) STRICT;
