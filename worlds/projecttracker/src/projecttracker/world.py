"""The ``World`` object, in a module of its own so that every other module can import it."""

from __future__ import annotations

import seahaven

__all__ = ["world"]

world = seahaven.World(
    name="projecttracker",
    version="1.0.0",
    state_format="seahaven.state/1",
    schema=seahaven.sql_files(__package__, "schema"),
    description=(
        "An issue tracker for a fictional software company, in the manner of Linear or Jira: "
        "teams, projects, issues with keys such as ENG-12, labels, comments, full-text search "
        "and an audit trail. It is the world the reference documentation's examples use."
    ),
    mcp_server_name="ProjectTracker",
    mcp_server_instructions=(
        "An issue tracker. Teams own projects, projects hold issues, and every issue has a key "
        "made of its team's key and a number, such as ENG-12: get_issue takes the key or the "
        "id, every other tool takes the id. Issues move through backlog, todo, in_progress, "
        "done and canceled; closing one (done or canceled) removes its assignee. You act as "
        "the session's user; the writes that record who did them also take actor_id. Lists "
        "return has_next and next_cursor: pass next_cursor back, with the same other "
        "arguments, for the next page. search_issues takes FTS5 query syntax."
    ),
)
