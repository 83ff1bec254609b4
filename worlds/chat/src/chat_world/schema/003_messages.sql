-- Messages, thread replies and reactions. A message is never removed: deleting
-- one clears its text and stamps deleted_at, so the change log keeps what it said.
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES channels (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    -- Seconds and microseconds since the epoch, fixed width, unique per channel:
    -- text order is time order.
    ts TEXT NOT NULL CHECK (
        ts GLOB '[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]'
    ),
    -- NULL for a message posted to the channel; the thread's first message for a reply.
    thread_root_id TEXT REFERENCES messages (id),
    text TEXT NOT NULL,
    -- Live replies only, kept by world code as replies are posted and deleted.
    reply_count INTEGER NOT NULL CHECK (reply_count >= 0),
    last_reply_at TEXT,
    created_at TEXT NOT NULL CHECK (
        created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'
    ),
    edited_at TEXT,
    deleted_at TEXT,
    UNIQUE (channel_id, ts),
    CHECK (deleted_at IS NULL OR text = '')
) STRICT;

CREATE INDEX messages_channel_history ON messages (channel_id, ts) WHERE thread_root_id IS NULL;
CREATE INDEX messages_thread_replies ON messages (thread_root_id, ts);
CREATE INDEX messages_by_author ON messages (user_id, ts);

CREATE TABLE reactions (
    message_id TEXT NOT NULL REFERENCES messages (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    -- The emoji's short name without colons, such as thumbsup or white_check_mark.
    emoji TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (message_id, emoji, user_id)
) STRICT;
