"""A small world this package's world adds: vendor, with tools of its own."""

import seahaven

vendor = seahaven.World(
    name="vendor",
    version="1.0.0",
    schema="CREATE TABLE accounts (id TEXT PRIMARY KEY, note TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@vendor.tool
def open_account(ctx: seahaven.Ctx, note: str) -> str:
    """Open an account with a note."""
    account = ctx.ids.uuid()
    ctx.db.execute("INSERT INTO accounts (id, note) VALUES (?, ?)", account, note)
    return account
