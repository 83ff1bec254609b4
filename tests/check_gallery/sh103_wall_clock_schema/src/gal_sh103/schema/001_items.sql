-- Items, stamped by SQLite rather than by the tool (CURRENT_TIMESTAMP in a comment is fine).
CREATE TABLE items (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
) STRICT;
