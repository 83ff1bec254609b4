-- The back office's own audit trail: one row per change a tool made in this
-- store, in order. actor_id is NULL only for the company's first hire, whom
-- nobody onboarded because nobody worked there yet.
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    occurred_at TEXT NOT NULL,
    actor_id TEXT REFERENCES staff (id),
    action TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    -- A JSON object with the facts worth keeping, keys sorted.
    detail TEXT NOT NULL
) STRICT;

CREATE INDEX audit_log_by_subject ON audit_log (subject_id, seq);
