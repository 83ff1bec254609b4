"""Full-text search over issue titles and descriptions, best match first.

The query goes to FTS5 as the agent wrote it, so its syntax (phrases, prefixes, OR, NOT,
column filters) is the agent's to use; a query FTS5 cannot parse raises a ``DbError``, which
the error handler restates as ``INVALID_INPUT`` on ``query`` with FTS5's complaint. The
ranking is FTS5's ``bm25()``, with a title match weighing four times a description match.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from pydantic import Field

import seahaven
from projecttracker.tools._pagination import page, position
from projecttracker.tools._rows import require_team
from projecttracker.tools._types import Cursor, IssueStatus, SearchQuery, TeamId
from projecttracker.world import world
from seahaven import toolkit

__all__ = ["Match", "search_issues"]

SearchLimit = Annotated[int, Field(ge=1, le=50, description="How many to return, 1 to 50.")]
_SNIPPET_TOKENS = 16


class Match(TypedDict):
    """An issue that matched, how well, and the words that matched it."""

    id: str
    key: str
    title: str
    status: str
    team_id: str
    project_id: str
    assignee_id: str | None
    archived_at: str | None
    # Higher is better: FTS5's bm25, negated.
    score: float
    # A few words around the match, matched terms marked **like this**.
    snippet: str


@world.tool
def search_issues(
    ctx: seahaven.Ctx,
    query: SearchQuery,
    team_id: TeamId | None = None,
    status: IssueStatus | None = None,
    limit: SearchLimit = 20,
    cursor: Cursor | None = None,
) -> dict[str, Any]:
    """Search issue titles and descriptions, archived issues included; best match first.

    Every plain word must match (endings loosely: "crash" finds "crashes"). FTS5 syntax
    works: "exact phrase", prefix*, OR, NOT, and title:word to search titles only. Each
    match has a score (higher is better) and a snippet with the matched words in **bold**.
    Answers {"issues": [...], "has_next", "next_cursor"}; pass next_cursor back, with the
    same other arguments, for more.
    """
    if team_id is not None:
        require_team(ctx, team_id)
    listing = ("search_issues", "rank", query, team_id, status)
    # The rank is a float, carried as its exact text so the position survives JSON unchanged.
    after = position(cursor, listing, (str, str))
    rows = ctx.db.rows(
        "SELECT * FROM ("
        " SELECT i.id, i.key, i.title, i.status, i.team_id, i.project_id, i.assignee_id,"
        " i.archived_at, bm25(issues_fts, 4.0, 1.0) AS rank,"
        f" snippet(issues_fts, -1, '**', '**', '…', {_SNIPPET_TOKENS}) AS snippet"
        " FROM issues_fts JOIN issues AS i ON i.rowid = issues_fts.rowid"
        " WHERE issues_fts MATCH ? AND (? IS NULL OR i.team_id = ?) AND (? IS NULL OR i.status = ?)"
        ") WHERE ? IS NULL OR (rank, id) > (?, ?) ORDER BY rank, id LIMIT ?",
        query,
        team_id,
        team_id,
        status,
        status,
        None if after is None else 1,
        None if after is None else float(after[0]),
        None if after is None else after[1],
        limit + 1,
    )
    shown, more = toolkit.split_page(rows, limit)
    matches = [
        Match(
            id=row["id"],
            key=row["key"],
            title=row["title"],
            status=row["status"],
            team_id=row["team_id"],
            project_id=row["project_id"],
            assignee_id=row["assignee_id"],
            archived_at=row["archived_at"],
            score=-float(row["rank"]),
            snippet=row["snippet"],
        )
        for row in shown
    ]
    return page(
        "issues", matches, more, listing, lambda: [repr(float(shown[-1]["rank"])), shown[-1]["id"]]
    )
