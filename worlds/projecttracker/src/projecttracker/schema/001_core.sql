-- ProjectTracker's nine tables. Every timestamp is canonical UTC text
-- (2026-06-01T09:00:00.000Z) written by the tool that makes the row, from the
-- instance clock; nothing in this file reads a clock, so a fixture replays.
-- Every table is STRICT with an explicit primary key.

CREATE TABLE users (
    -- u_1, u_2, ...: minted by create_user from this table, never reused.
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
    role TEXT NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    created_at TEXT NOT NULL CHECK (
        created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'
    )
) STRICT;

CREATE TABLE teams (
    id TEXT PRIMARY KEY,
    -- Two to five capital letters: the prefix of every issue key the team mints.
    key TEXT NOT NULL UNIQUE CHECK (
        length(key) BETWEEN 2 AND 5 AND key NOT GLOB '*[^A-Z]*'
    ),
    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
    description TEXT NOT NULL DEFAULT '',
    -- The number of the last issue key handed out (ENG-41 leaves 41 here).
    -- Bumped by the same UPDATE ... RETURNING that reads it; never goes down.
    issue_counter INTEGER NOT NULL DEFAULT 0 CHECK (issue_counter >= 0),
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE team_members (
    team_id TEXT NOT NULL REFERENCES teams (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    joined_at TEXT NOT NULL,
    PRIMARY KEY (team_id, user_id)
) STRICT;

CREATE INDEX team_members_by_user ON team_members (user_id);

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    team_id TEXT NOT NULL REFERENCES teams (id),
    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
    description TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL CHECK (state IN ('planned', 'active', 'done')),
    lead_id TEXT REFERENCES users (id),
    -- A calendar date, YYYY-MM-DD, or NULL for none.
    target_date TEXT CHECK (
        target_date IS NULL OR target_date GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'
    ),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (team_id, name)
) STRICT;

CREATE TABLE issues (
    id TEXT PRIMARY KEY,
    -- TEAMKEY-n, from the team's issue_counter.
    key TEXT NOT NULL UNIQUE,
    team_id TEXT NOT NULL REFERENCES teams (id),
    project_id TEXT NOT NULL REFERENCES projects (id),
    title TEXT NOT NULL CHECK (length(trim(title)) > 0),
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (
        status IN ('backlog', 'todo', 'in_progress', 'done', 'canceled')
    ),
    -- 0 none, 1 urgent, 2 high, 3 medium, 4 low.
    priority INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 4),
    assignee_id TEXT REFERENCES users (id),
    creator_id TEXT NOT NULL REFERENCES users (id),
    -- Story points, when someone estimated it.
    estimate INTEGER CHECK (estimate IS NULL OR estimate BETWEEN 0 AND 100),
    due_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- When it last moved to done or canceled; NULL while it is open.
    completed_at TEXT,
    -- Archived issues keep every field and leave the lists.
    archived_at TEXT
) STRICT;

-- One index per filter column list_issues takes, and one for its ordering.
CREATE INDEX issues_by_team ON issues (team_id);
CREATE INDEX issues_by_project ON issues (project_id);
CREATE INDEX issues_by_status ON issues (status);
CREATE INDEX issues_by_assignee ON issues (assignee_id);
CREATE INDEX issues_by_created ON issues (created_at, id);

CREATE TABLE labels (
    id TEXT PRIMARY KEY,
    team_id TEXT NOT NULL REFERENCES teams (id),
    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
    -- #rrggbb, lower-case hex.
    color TEXT NOT NULL CHECK (color GLOB '#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'),
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (team_id, name)
) STRICT;

CREATE TABLE issue_labels (
    issue_id TEXT NOT NULL REFERENCES issues (id),
    label_id TEXT NOT NULL REFERENCES labels (id),
    PRIMARY KEY (issue_id, label_id)
) STRICT;

CREATE INDEX issue_labels_by_label ON issue_labels (label_id);

CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    issue_id TEXT NOT NULL REFERENCES issues (id),
    author_id TEXT NOT NULL REFERENCES users (id),
    body TEXT NOT NULL CHECK (length(trim(body)) > 0),
    created_at TEXT NOT NULL
) STRICT;

-- list_comments reads one issue's comments oldest first, ties by id.
CREATE INDEX comments_by_issue ON comments (issue_id, created_at, id);

CREATE TABLE issue_events (
    id TEXT PRIMARY KEY,
    issue_id TEXT NOT NULL REFERENCES issues (id),
    actor_id TEXT NOT NULL REFERENCES users (id),
    kind TEXT NOT NULL CHECK (kind IN ('created', 'status', 'assignee', 'comment')),
    -- A STRICT table has no JSON type: the CHECK is what makes this column JSON.
    payload TEXT NOT NULL CHECK (json_valid(payload)),
    created_at TEXT NOT NULL
) STRICT;

-- Read in the order things happened: ORDER BY created_at, rowid.
CREATE INDEX issue_events_by_issue ON issue_events (issue_id, created_at);
