-- Full-text search over issue titles and descriptions. The index holds no text
-- of its own (content = 'issues'): it reads the issues table by rowid, and the
-- three triggers keep it an exact mirror, so FTS5's integrity-check holds and
-- no tool maintains it by hand. The triggers stamp no time.
CREATE VIRTUAL TABLE issues_fts USING fts5 (
    title,
    description,
    content = 'issues',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER issues_fts_after_insert AFTER INSERT ON issues
BEGIN
    INSERT INTO issues_fts (rowid, title, description)
    VALUES (new.rowid, new.title, new.description);
END;

CREATE TRIGGER issues_fts_after_update AFTER UPDATE OF title, description ON issues
BEGIN
    INSERT INTO issues_fts (issues_fts, rowid, title, description)
    VALUES ('delete', old.rowid, old.title, old.description);
    INSERT INTO issues_fts (rowid, title, description)
    VALUES (new.rowid, new.title, new.description);
END;

CREATE TRIGGER issues_fts_after_delete AFTER DELETE ON issues
BEGIN
    INSERT INTO issues_fts (issues_fts, rowid, title, description)
    VALUES ('delete', old.rowid, old.title, old.description);
END;
