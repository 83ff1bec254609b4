"""A world whose schema is written inline, with a trailing comma SQLite refuses."""

import seahaven

world = seahaven.World(
    name="sh104_inline",
    version="1.0.0",
    schema="CREATE TABLE items (id TEXT PRIMARY KEY, title TEXT NOT NULL,) STRICT;",
    state_format="seahaven.state/1",
)
