"""ProjectTracker's tools, one module per resource. Importing this package registers them all.

The import order is the order of the agent's tool list: people, teams, projects, labels,
issues, comments, search, then the SQL door. The ``_``-prefixed modules register nothing:
they hold the argument types, the keyset cursor, the row shapes and lookups, and the audit
trail, shared by the tools.
"""

# isort would alphabetise these, and the order is the tool list's order.
from projecttracker.tools import users  # noqa: I001
from projecttracker.tools import teams, projects, labels, issues, comments, search

import seahaven

from projecttracker.world import world

__all__ = [
    "MAX_ROWS",
    "SQL_TABLES",
    "comments",
    "issues",
    "labels",
    "projects",
    "search",
    "teams",
    "users",
]

SQL_TABLES = (
    "users",
    "teams",
    "team_members",
    "projects",
    "issues",
    "labels",
    "issue_labels",
    "comments",
    "issue_events",
)
"""The nine tables the SQL door reads. The search index is left out on purpose: an agent
searches through search_issues, and one way to do a thing is enough."""

MAX_ROWS = 500
"""The most rows one run_sql answer carries; aggregate in SQL for more."""

world.tool(
    seahaven.sql_tools.run_sql(
        tables=SQL_TABLES,
        max_rows=MAX_ROWS,
        description=(
            "Run one read-only SQLite statement against the tracker's tables (users, teams, "
            "team_members, projects, issues, labels, issue_labels, comments, issue_events) and "
            "get its columns and rows. For reports the other tools do not give; "
            f"describe_schema lists every column. At most {MAX_ROWS} rows come back (truncated "
            "says when more were cut). A query SQLite refuses answers with SQLite's own message."
        ),
    )
)
world.tool(seahaven.sql_tools.describe_schema(tables=SQL_TABLES))
