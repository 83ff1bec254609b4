-- Full-text search over messages. The index reads its text from the messages
-- table (external content), keyed by that table's rowid; messages are never
-- removed, so rowids never move. Triggers keep it an exact mirror of that
-- table, so no tool maintains it by hand and FTS5's integrity-check holds. A
-- deleted message keeps its row with empty text, which indexes no words, so it
-- can never match. FTS5's shadow tables are left out of the change log by the
-- framework.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text,
    content = 'messages',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_after_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TRIGGER messages_fts_after_update AFTER UPDATE OF text ON messages
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO messages_fts (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TRIGGER messages_fts_after_delete AFTER DELETE ON messages
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
