"""People: listing and finding accounts, and creating one."""

from __future__ import annotations

import seahaven

from chat_world import store
from chat_world.access import acting_user
from chat_world.errors import NameTaken, NotFound, RestrictedAction, UserDeactivated
from chat_world.models import User, UserPage
from chat_world.pagination import decode_cursor, encode_cursor, split_page
from chat_world.types import (
    Cursor,
    DisplayName,
    Handle,
    HandleRef,
    IncludeDeactivated,
    Limit,
    Role,
    Timezone,
    Title,
    UserId,
)
from chat_world.views import USER_COLUMNS, load_user, user_from_row
from chat_world.world import world

__all__ = ["create_user", "deactivate_user", "get_user", "list_users", "lookup_user_by_handle"]


@world.tool
def list_users(
    ctx: seahaven.Ctx,
    limit: Limit = 100,
    cursor: Cursor | None = None,
    include_deactivated: IncludeDeactivated = False,
) -> UserPage:
    """List the people in the workspace, alphabetically by handle.

    Deactivated accounts are left out unless include_deactivated is true. Returns
    one page of users and next_cursor; when next_cursor is not null, call again
    with it (and the same include_deactivated) for the next page.
    """
    scope = ("list_users", include_deactivated)
    after_handle, after_id = (
        decode_cursor(cursor, scope, (str, str)) if cursor is not None else ("", "")
    )
    rows = ctx.db.rows(
        f"SELECT {USER_COLUMNS} FROM users AS u "
        "WHERE (? OR u.deactivated = 0) AND (u.handle, u.id) > (?, ?) "
        "ORDER BY u.handle, u.id LIMIT ?",
        int(include_deactivated),
        after_handle,
        after_id,
        limit + 1,
    )
    page, more = split_page(rows, limit)
    last = page[-1] if page else None
    return UserPage(
        users=[user_from_row(row) for row in page],
        next_cursor=encode_cursor(scope, [last["handle"], last["id"]]) if more and last else None,
    )


@world.tool
def get_user(ctx: seahaven.Ctx, user_id: UserId) -> User:
    """Fetch one person's profile by user id: handle, display name, title, time zone, role."""
    user = load_user(ctx, user_id)
    if user is None:
        raise NotFound("user", user_id, "list users or look up a handle to find an id")
    return user


@world.tool
def lookup_user_by_handle(ctx: seahaven.Ctx, handle: HandleRef) -> User:
    """Find a person by their @handle (with or without the @) and return their profile."""
    bare = handle.removeprefix("@")
    row = ctx.db.one(f"SELECT {USER_COLUMNS} FROM users AS u WHERE u.handle = ?", bare)
    if row is None:
        raise NotFound("user", f"@{bare}", "list users to see every handle")
    return user_from_row(row)


@world.tool
def create_user(
    ctx: seahaven.Ctx,
    handle: Handle,
    display_name: DisplayName,
    title: Title = "",
    timezone: Timezone = "UTC",
    role: Role = "member",
) -> User:
    """Create an account for a new person (workspace admins only) and return it.

    The new account joins #general straight away. role is member or admin. The
    first account created in a workspace with no accounts becomes its owner,
    whatever role is asked for. Fails with NAME_TAKEN when the handle is in use.
    """
    has_accounts = ctx.db.one("SELECT 1 FROM users LIMIT 1") is not None
    if has_accounts:
        actor = acting_user(ctx)
        if not actor.is_admin:
            raise RestrictedAction(
                "only workspace owners and admins can create accounts", "admin_only"
            )
    if ctx.db.one("SELECT 1 FROM users WHERE handle = ?", handle) is not None:
        raise NameTaken("handle", handle)
    user_id = store.insert_user(
        ctx,
        handle=handle,
        display_name=display_name.strip(),
        title=title.strip(),
        timezone=timezone,
        role=role if has_accounts else "owner",
        at=ctx.clock.iso(),
    )
    created = load_user(ctx, user_id)
    assert created is not None  # written two statements above, in this transaction
    return created


@world.tool
def deactivate_user(ctx: seahaven.Ctx, user_id: UserId) -> User:
    """Deactivate a person's account (workspace admins only), as when they leave the company.

    A deactivated account drops out of member lists and cannot be invited to
    channels; what it wrote stays. The owner's account and your own cannot be
    deactivated. Returns the account, now deactivated.
    """
    actor = acting_user(ctx)
    if not actor.is_admin:
        raise RestrictedAction(
            "only workspace owners and admins can deactivate accounts", "admin_only"
        )
    target = load_user(ctx, user_id)
    if target is None:
        raise NotFound("user", user_id, "list users or look up a handle to find an id")
    if target.deactivated:
        raise UserDeactivated(target.id, target.handle)
    if target.role == "owner" or target.id == actor.id:
        raise RestrictedAction(
            "the workspace owner's account and your own cannot be deactivated", "protected_account"
        )
    store.deactivate_user(ctx, target.id)
    deactivated = load_user(ctx, target.id)
    assert deactivated is not None  # updated in this transaction, never removed
    return deactivated
