"""Search: full-text search over the messages the acting user can see."""

from __future__ import annotations

import json
import re

import seahaven

from chat_world.access import VISIBLE_TO, acting_user, visible_channel
from chat_world.errors import InvalidInput, NotFound
from chat_world.models import Message, SearchMatch, SearchResults
from chat_world.pagination import decode_cursor, encode_cursor
from chat_world.types import ChannelId, Cursor, SearchLimit, SearchQuery, UserId
from chat_world.views import MESSAGE_SELECT, messages_from_rows
from chat_world.world import world

__all__ = ["search_messages"]

# A quoted phrase, or a run of anything else that is not whitespace.
_TERM = re.compile(r'"([^"]*)"|(\S+)')
_SNIPPET_WORDS = 12


def _match_expression(query: str) -> str:
    """The query as an FTS5 expression in which every term is a quoted string.

    Quoting every term means nothing an agent types is read as FTS5 syntax
    (AND, NEAR, a column filter, a stray parenthesis), so a query can match
    nothing but can never be a syntax error.
    """
    parts: list[str] = []
    for match in _TERM.finditer(query):
        phrase, word = match.group(1), match.group(2)
        prefix = False
        if word is not None:
            prefix = word.endswith("*")
            phrase = word.rstrip("*")
        text = (phrase or "").strip()
        if not any(character.isalnum() for character in text):
            continue
        quoted = '"' + text.replace('"', '""') + '"'
        parts.append(quoted + "*" if prefix else quoted)
    if not parts:
        raise InvalidInput.field("query", "give at least one word made of letters or digits")
    return " AND ".join(parts)


@world.tool
def search_messages(
    ctx: seahaven.Ctx,
    query: SearchQuery,
    channel_id: ChannelId | None = None,
    user_id: UserId | None = None,
    limit: SearchLimit = 20,
    cursor: Cursor | None = None,
) -> SearchResults:
    """Search the messages you can see: every public channel, and private channels you are in.

    Every word of the query must appear (word endings are matched loosely, so
    "deploy" also finds "deploying"). Put an exact phrase in double quotes and end
    a word with * to match its prefix. channel_id limits the search to one channel,
    user_id to one author. Thread replies are searched too; deleted messages are
    not. Results come best match first (ties: newest first), each with a snippet
    in which matching words are marked *like this*. Returns a page, the total
    number of matches and next_cursor; when next_cursor is not null, call again
    with it and the same other arguments for more.
    """
    actor = acting_user(ctx)
    if channel_id is not None:
        channel_id = visible_channel(ctx, channel_id, actor).id
    if user_id is not None and ctx.db.one("SELECT 1 FROM users WHERE id = ?", user_id) is None:
        raise NotFound("user", user_id, "list users or look up a handle to find an id")
    expression = _match_expression(query)
    scope = ("search_messages", query, channel_id, user_id)
    # Ranked results have no stable key to resume after (a new message shifts
    # every score), so the cursor is a position in the ranked list.
    (offset,) = decode_cursor(cursor, scope, (int,)) if cursor is not None else (0,)
    where = (
        "messages_fts MATCH ? AND m.deleted_at IS NULL "
        f"AND {VISIBLE_TO} AND (? IS NULL OR m.channel_id = ?) AND (? IS NULL OR m.user_id = ?)"
    )
    parameters = (expression, actor.id, channel_id, channel_id, user_id, user_id)
    total_row = ctx.db.one(
        "SELECT count(*) AS total FROM messages_fts "
        "JOIN messages AS m ON m.rowid = messages_fts.rowid "
        f"JOIN channels AS c ON c.id = m.channel_id WHERE {where}",
        *parameters,
    )
    total = int(total_row["total"]) if total_row is not None else 0
    ranked = ctx.db.rows(
        "SELECT m.id, c.name AS channel_name, bm25(messages_fts) AS rank, "
        f"snippet(messages_fts, 0, '*', '*', '…', {_SNIPPET_WORDS}) AS snippet "
        "FROM messages_fts JOIN messages AS m ON m.rowid = messages_fts.rowid "
        f"JOIN channels AS c ON c.id = m.channel_id WHERE {where} "
        "ORDER BY rank, m.ts DESC, m.id DESC LIMIT ? OFFSET ?",
        *parameters,
        limit,
        offset,
    )
    by_id: dict[str, Message] = {}
    if ranked:
        rows = ctx.db.rows(
            f"{MESSAGE_SELECT} WHERE m.id IN (SELECT value FROM json_each(?))",
            json.dumps([str(row["id"]) for row in ranked]),
        )
        by_id = {message.id: message for message in messages_from_rows(ctx, rows)}
    matches = [
        SearchMatch(
            message=by_id[str(row["id"])],
            channel_name=str(row["channel_name"]),
            snippet=str(row["snippet"]),
            # bm25 is lower-is-better; flipped so a caller reads a higher score as better.
            score=-float(row["rank"]),
        )
        for row in ranked
    ]
    following = offset + len(ranked)
    return SearchResults(
        query=query,
        total=total,
        matches=matches,
        next_cursor=encode_cursor(scope, [following]) if following < total else None,
    )
