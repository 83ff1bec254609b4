-- People in the workspace. Timestamps are written by world code from the
-- instance clock, as 2026-06-01T09:00:00.000Z; nothing here reads a clock.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    -- What people type after @: lowercase letters, digits, '-' and '_'.
    handle TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    title TEXT NOT NULL,
    -- A label such as Europe/Berlin, shown to colleagues; never used for arithmetic.
    timezone TEXT NOT NULL,
    -- One owner per workspace (the index below), any number of admins.
    role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    deactivated INTEGER NOT NULL CHECK (deactivated IN (0, 1)),
    created_at TEXT NOT NULL CHECK (
        created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'
    )
) STRICT;

CREATE UNIQUE INDEX users_single_owner ON users (role) WHERE role = 'owner';
