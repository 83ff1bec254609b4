CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL,
    at TEXT NOT NULL
) STRICT;

CREATE TRIGGER items_audit AFTER INSERT ON items
BEGIN
    INSERT INTO audit (item_id, at) VALUES (new.id, datetime('now'));
END;

CREATE VIEW recent_audit AS
    SELECT * FROM audit WHERE julianday(at) > julianday() - 1;
