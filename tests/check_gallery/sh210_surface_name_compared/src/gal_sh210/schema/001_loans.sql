-- Loans: one row per book lent.
CREATE TABLE loans (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL
) STRICT;
