"""Comments: the conversation on an issue, archived issues included."""

from __future__ import annotations

from typing import Any

import seahaven
from projecttracker.startup import acting_user
from projecttracker.tools import _events
from projecttracker.tools._pagination import page, position
from projecttracker.tools._rows import Comment, comment_out, require_issue
from projecttracker.tools._types import Actor, CommentBody, Cursor, IssueId, Limit
from projecttracker.world import world
from seahaven import toolkit

__all__ = ["add_comment", "list_comments"]


@world.tool
def add_comment(
    ctx: seahaven.Ctx, issue_id: IssueId, body: CommentBody, actor_id: Actor | None = None
) -> Comment:
    """Comment on an issue, as actor_id or as this session's user. Archived and closed issues
    take comments too: archiving freezes the issue, not the conversation about it.
    """
    author = acting_user(ctx, actor_id)
    require_issue(ctx, issue_id)
    comment = Comment(
        id=ctx.ids.uuid(),
        issue_id=issue_id,
        author_id=author,
        body=body,
        created_at=ctx.clock.iso(),
    )
    ctx.db.execute(
        "INSERT INTO comments (id, issue_id, author_id, body, created_at) VALUES (?, ?, ?, ?, ?)",
        comment["id"],
        comment["issue_id"],
        comment["author_id"],
        comment["body"],
        comment["created_at"],
    )
    _events.record(ctx, issue_id, author, "comment", {"comment_id": comment["id"]})
    return comment


@world.tool
def list_comments(
    ctx: seahaven.Ctx, issue_id: IssueId, limit: Limit = 50, cursor: Cursor | None = None
) -> dict[str, Any]:
    """An issue's comments, oldest first; comments made at the same instant come in id order,
    which is not necessarily the order they were written in.

    Answers {"comments": [...], "has_next", "next_cursor"}; pass next_cursor back, with the
    same issue_id, for the next page.
    """
    require_issue(ctx, issue_id)
    listing = ("comments", "created_at", issue_id)
    after = position(cursor, listing, (str, str))
    rows, more = toolkit.keyset_page(
        ctx.db,
        table="comments",
        where=["issue_id = ?"],
        params=[issue_id],
        order_by="created_at",
        descending=False,
        limit=limit,
        after=after,
    )
    return page(
        "comments",
        [comment_out(row) for row in rows],
        more,
        listing,
        lambda: [rows[-1]["created_at"], rows[-1]["id"]],
    )
