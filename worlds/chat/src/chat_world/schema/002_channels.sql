-- Channels and who is in them.
CREATE TABLE channels (
    id TEXT PRIMARY KEY,
    -- Unique across live and archived channels alike, as in the real product.
    name TEXT NOT NULL UNIQUE,
    is_private INTEGER NOT NULL CHECK (is_private IN (0, 1)),
    -- The workspace-wide channel every new account joins; it cannot be left or archived.
    is_general INTEGER NOT NULL CHECK (is_general IN (0, 1)),
    topic TEXT NOT NULL,
    topic_set_by TEXT REFERENCES users (id),
    topic_set_at TEXT,
    purpose TEXT NOT NULL,
    is_archived INTEGER NOT NULL CHECK (is_archived IN (0, 1)),
    archived_at TEXT,
    archived_by TEXT REFERENCES users (id),
    creator_id TEXT NOT NULL REFERENCES users (id),
    created_at TEXT NOT NULL CHECK (
        created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'
    ),
    CHECK ((is_archived = 1) = (archived_at IS NOT NULL)),
    CHECK (is_general = 0 OR (is_private = 0 AND is_archived = 0))
) STRICT;

CREATE UNIQUE INDEX channels_single_general ON channels (is_general) WHERE is_general = 1;

CREATE TABLE memberships (
    channel_id TEXT NOT NULL REFERENCES channels (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    joined_at TEXT NOT NULL,
    PRIMARY KEY (channel_id, user_id)
) STRICT;

CREATE INDEX memberships_by_user ON memberships (user_id, channel_id);
