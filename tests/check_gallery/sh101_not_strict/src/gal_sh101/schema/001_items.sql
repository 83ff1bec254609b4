-- Items: a title and nothing else.
-- Nothing holds SQLite to the declared types here.
create table if not exists "items" (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL
);
