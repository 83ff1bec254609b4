"""A copy of ProjectTracker whose product speaks XML-RPC: the extension's world under test.

Its schema is projecttracker's plus the extension's call log, so it has a schema hash of its
own, and its fixtures are built for it (see ``conftest.py``) from projecttracker's. Its agent
surface is one tool, ``rpc``; the methods inside it are projecttracker's own tool functions,
called with the document's parameters, and one method of this world's own. The registration
order is the one the extension asks for: the world's error handler first, so it stays
outermost, then the fault renderer, inside it.
"""

from __future__ import annotations

import projecttracker
import seahaven_xmlrpc
from projecttracker.middleware.error_handler import error_handler
from projecttracker.startup import set_viewer
from projecttracker.tools.comments import add_comment
from projecttracker.tools.issues import get_issue, transition_issue
from projecttracker.tools.search import search_issues
from projecttracker.tools.users import create_user, get_user

import seahaven

__all__ = ["METHODS", "close_issues", "world"]


def close_issues(ctx: seahaven.Ctx, keys: list[str]) -> list[str]:
    """Close every issue named by key, in order: all of them, or none if one is missing."""
    closed = []
    for key in keys:
        issue = get_issue(ctx, key=key)
        closed.append(transition_issue(ctx, issue_id=issue["id"], status="done")["key"])
    return closed


METHODS = {
    "issue.get": get_issue,
    "issue.transition": transition_issue,
    "issue.comment": add_comment,
    "issue.search": search_issues,
    "issue.closeAll": close_issues,
    "user.create": create_user,
    "user.get": get_user,
}

world = seahaven.World(
    name="tracker_rpc",
    version="1.0.0",
    schema=seahaven.sql_files(projecttracker.__name__, "schema") + seahaven_xmlrpc.CALL_LOG_DDL,
    state_format="seahaven.state/1",
)
world.middleware(error_handler)
world.middleware(seahaven_xmlrpc.render_faults(tools=["rpc"]))
world.tool(seahaven_xmlrpc.xmlrpc_call(methods=METHODS, log_calls=True))
world.instance_startup(set_viewer)
world.instance_startup(seahaven_xmlrpc.remember_client)
