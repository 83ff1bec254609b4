"""Staff: who the agent is, the people on staff, onboarding, offboarding, reimbursement accounts."""

from __future__ import annotations

from typing import Any, Literal

from chat_world.errors import NotFound as ChatNotFound
from chat_world.tools.channels import invite_to_channel, join_channel
from chat_world.tools.messages import post_message
from chat_world.tools.users import (
    create_user,
    deactivate_user,
    get_user,
    lookup_user_by_handle,
)
from payments_world.tools.bank_accounts import add_bank_account, list_bank_accounts

import seahaven
from company_world import audit, channels
from company_world.access import MANAGEMENT, acting_staff, require_actor
from company_world.dates import today
from company_world.errors import AlreadyExists, Forbidden, InvalidInput, InvalidState
from company_world.ids import new_id
from company_world.models import Staff, StaffPage
from company_world.pagination import keyset_page
from company_world.store import fetch, load_staff, staff_model
from company_world.types import (
    AccountNumber,
    ChannelName,
    ChatHandle,
    Cursor,
    Date,
    Department,
    Email,
    FullName,
    Limit,
    Note,
    Role,
    RoutingNumber,
    StaffId,
    StaffStatus,
    Timezone,
    Title,
)
from company_world.world import CompanyWorlds, world

__all__ = [
    "get_staff",
    "list_staff",
    "offboard_employee",
    "onboard_employee",
    "set_reimbursement_account",
    "whoami",
]

# Chat roles follow back-office roles: administrators administer the workspace too.
_CHAT_ROLE: dict[Role, Literal["admin", "member"]] = {
    "admin": "admin",
    "finance": "member",
    "hr": "member",
    "employee": "member",
}


@world.tool
def whoami(ctx: seahaven.Ctx[CompanyWorlds]) -> Staff:
    """Say who you are acting as: your staff record, with your role and department.

    Your role decides what you may do. admin: everything. finance: invoices,
    expenses and both payments accounts. hr: onboarding and offboarding.
    employee: staff lookups, your own expenses, and chat. Everyone may read
    and post in chat.

    Errors: FORBIDDEN when the company has nobody to act as yet.
    """
    return load_staff(ctx, require_actor(ctx).id)


@world.tool
def list_staff(
    ctx: seahaven.Ctx[CompanyWorlds],
    department: Department | None = None,
    role: Role | None = None,
    status: StaffStatus | None = "active",
    email: Email | None = None,
    limit: Limit = 20,
    cursor: Cursor | None = None,
) -> StaffPage:
    """List the people on staff, alphabetically by full name (ties broken by id).

    Args:
        department: Only people in this department: executive, engineering,
            finance, people, sales or support.
        role: Only people with this role: admin, finance, hr or employee.
        status: active (the default) or inactive; null for everyone who ever
            worked here.
        email: Only the person with this email address, such as ada@example.com.
        limit: How many people to return in this page, 1 to 100 (default 20).
        cursor: The next_cursor of the previous page. Leave it out for the first
            page, and pass the other arguments unchanged.

    Returns a page: staff, and next_cursor (null on the last page).

    Errors: INVALID_INPUT for a cursor from another listing.
    """
    where: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("department", department),
        ("role", role),
        ("status", status),
        ("email", email.lower() if email is not None else None),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows, next_cursor = keyset_page(
        ctx,
        scope=("list_staff", department, role, status, email),
        table="staff",
        where=where,
        params=params,
        order_by="full_name",
        descending=False,
        limit=limit,
        cursor=cursor,
    )
    return StaffPage(staff=[staff_model(row) for row in rows], next_cursor=next_cursor)


@world.tool
def get_staff(ctx: seahaven.Ctx[CompanyWorlds], staff_id: StaffId) -> Staff:
    """Fetch one member of staff, current or former, by id.

    Errors: NOT_FOUND when nobody on staff has that id.
    """
    return load_staff(ctx, staff_id)


@world.tool
def onboard_employee(
    ctx: seahaven.Ctx[CompanyWorlds],
    full_name: FullName,
    email: Email,
    title: Title,
    role: Role,
    department: Department,
    chat_handle: ChatHandle,
    manager_id: StaffId | None = None,
    start_date: Date | None = None,
    timezone: Timezone = "UTC",
    channels_to_join: list[ChannelName] | None = None,
) -> Staff:
    """Onboard a new employee: their staff record, a chat account, and their chat channels.

    Args:
        full_name: The new employee's full name.
        email: Their work email address, unique on staff.
        title: Their job title, such as Backend Engineer.
        role: What they may do: admin, finance, hr or employee.
        department: Where they work: executive, engineering, finance, people,
            sales or support.
        chat_handle: Their handle in chat, without the @: 1 to 32 lowercase
            letters, digits, '-' or '_', such as maya or dev-raman.
        manager_id: Their manager, someone active on staff.
        start_date: Their first day, YYYY-MM-DD (default today).
        timezone: Shown in chat, such as Europe/Berlin (default UTC).
        channels_to_join: More existing chat channels to add them to, each by
            name with or without the #.

    In chat, the new account is added to #company and to their department's
    channel (#leadership for executive, otherwise the department's name;
    finance also gets #billing), each created if it does not exist yet, plus
    channels_to_join, and a welcome message is posted in #company. A company
    with nobody on staff yet can only onboard its first administrator: role
    admin, no manager.

    Returns the new member of staff (emp_...), with their chat_user_id.

    Errors: ALREADY_EXISTS when the email is on staff already or the chat
    handle is taken; NOT_FOUND for an unknown manager_id, or a channel in
    channels_to_join the back office cannot see; INVALID_STATE when the
    manager has left or a channel in channels_to_join is archived;
    INVALID_INPUT for a malformed argument, or a first hire who is not an
    admin.
    """
    actor = acting_staff(ctx)
    email = email.lower()
    first_hire = ctx.db.one("SELECT 1 FROM staff LIMIT 1") is None
    if first_hire and role != "admin":
        raise InvalidInput.on(
            "role", "the company has nobody on staff yet; its first hire is its admin"
        )
    if first_hire and manager_id is not None:
        raise InvalidInput.on("manager_id", "the company's first hire has nobody to report to")
    existing = ctx.db.one("SELECT id FROM staff WHERE email = ?", email)
    if existing is not None:
        raise AlreadyExists("member of staff", "email", email, existing["id"])
    if manager_id is not None:
        manager = fetch(ctx, "staff", manager_id)
        if manager["status"] != "active":
            raise InvalidState(
                f"{manager['full_name']} ({manager_id}) has left the company and cannot manage "
                "anyone; name an active manager",
                manager_id=manager_id,
            )

    chat = ctx.worlds.chat
    # What is written in chat stays there even if this tool fails later, so every
    # check that can refuse is made before the first write there.
    try:
        taken = chat.call(lookup_user_by_handle, handle=chat_handle)
    except ChatNotFound:
        pass
    else:
        raise AlreadyExists("chat account", "handle", f"@{chat_handle}", taken.id)
    extra = [channels.find(chat, name) for name in dict.fromkeys(channels_to_join or ())]
    for channel in extra:
        if channel.is_archived:
            raise InvalidState(
                f"#{channel.name} is archived, so nobody can be added to it; leave it out",
                channel_id=channel.id,
            )

    joined = [
        channels.ready(chat, spec)
        for spec in (channels.COMPANY, *channels.DEPARTMENT_CHANNELS[department])
    ]
    for channel in extra:
        if not channel.is_member:
            channel = chat.call(join_channel, channel_id=channel.id)
        joined.append(channel)
    account = chat.call(
        create_user,
        handle=chat_handle,
        display_name=full_name.strip(),
        title=title.strip(),
        timezone=timezone,
        role=_CHAT_ROLE[role],
    )
    for channel in {channel.id: channel for channel in joined}.values():
        if not channel.is_general:  # the workspace-wide channel takes every account itself
            chat.call(invite_to_channel, channel_id=channel.id, user_id=account.id)
    chat.call(
        post_message,
        channel_id=joined[0].id,
        text=f"Please welcome @{chat_handle}, our new {title.strip()} ({department})!",
    )

    staff_id = new_id(ctx, "emp")
    ctx.db.execute(
        "INSERT INTO staff (id, full_name, email, title, role, department, manager_id,"
        " chat_user_id, reimbursement_bank_account_id, status, start_date, end_date, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 'active', ?, NULL, ?)",
        staff_id,
        full_name.strip(),
        email,
        title.strip(),
        role,
        department,
        manager_id,
        account.id,
        start_date.isoformat() if start_date is not None else today(ctx),
        ctx.clock.iso(),
    )
    audit.record(
        ctx,
        actor_id=actor.id if actor is not None else None,
        action="staff.onboarded",
        subject_id=staff_id,
        role=role,
        department=department,
        chat_user_id=account.id,
    )
    return load_staff(ctx, staff_id)


@world.tool
def offboard_employee(
    ctx: seahaven.Ctx[CompanyWorlds], staff_id: StaffId, note: Note | None = None
) -> Staff:
    """Offboard someone who is leaving: inactive from today, and their chat account deactivated.

    Their invoices, expenses and decisions stay, and so do their chat messages.
    People who reported to them keep them as manager until that is changed.

    Returns the member of staff, now inactive with an end_date.

    Errors: NOT_FOUND for an unknown staff_id; INVALID_STATE when they have
    already left, or are the last active admin; FORBIDDEN for offboarding
    yourself.
    """
    actor = require_actor(ctx)
    leaving = fetch(ctx, "staff", staff_id)
    if leaving["status"] != "active":
        raise InvalidState(
            f"{leaving['full_name']} ({staff_id}) left on {leaving['end_date']}",
            staff_id=staff_id,
            end_date=leaving["end_date"],
        )
    if staff_id == actor.id:
        raise Forbidden("nobody offboards themselves; ask someone else in hr or an admin")
    if leaving["role"] == "admin":
        admins = ctx.db.one(
            "SELECT count(*) AS n FROM staff WHERE role = 'admin' AND status = 'active'"
        )
        if admins is not None and admins["n"] <= 1:
            raise InvalidState(
                f"{leaving['full_name']} is the company's last active admin", staff_id=staff_id
            )
    chat = ctx.worlds.chat
    if not chat.call(get_user, user_id=leaving["chat_user_id"]).deactivated:
        chat.call(deactivate_user, user_id=leaving["chat_user_id"])
    ctx.db.execute(
        "UPDATE staff SET status = 'inactive', end_date = ? WHERE id = ?", today(ctx), staff_id
    )
    audit.record(
        ctx, actor_id=actor.id, action="staff.offboarded", subject_id=staff_id, note=note or None
    )
    return load_staff(ctx, staff_id)


@world.tool
def set_reimbursement_account(
    ctx: seahaven.Ctx[CompanyWorlds],
    account_number: AccountNumber,
    routing_number: RoutingNumber | None = None,
    staff_id: StaffId | None = None,
) -> Staff:
    """Put a bank account on file for someone's expense reimbursements (yours by default).

    The account is registered with the usd payments account as a payout
    destination in the person's name; only its last four digits are kept, and
    it replaces any account on file before. Naming someone else (staff_id)
    needs the role admin, finance or hr.

    Returns the member of staff, with reimbursement_bank_account_id set.

    Errors: FORBIDDEN for someone else's account without one of those roles;
    NOT_FOUND for an unknown staff_id; INVALID_STATE when they have left, or
    when the company has no usd bank account of its own yet (it must have its
    operating account before any other, or payouts would default to an
    employee's).
    """
    actor = require_actor(ctx)
    target_id = staff_id if staff_id is not None else actor.id
    if target_id != actor.id and actor.role not in MANAGEMENT:
        raise Forbidden(
            "only admin, finance or hr may put a bank account on file for someone else",
            staff_id=target_id,
        )
    person = fetch(ctx, "staff", target_id)
    if person["status"] != "active":
        raise InvalidState(f"{person['full_name']} ({target_id}) has left", staff_id=target_id)
    payments = ctx.worlds.payments
    if not payments.call(list_bank_accounts, currency="usd", limit=1).data:
        raise InvalidState(
            "the company has no usd bank account of its own yet; add its operating account "
            "first (pay_add_bank_account), so payouts do not default to an employee's account"
        )
    bank = payments.call(
        add_bank_account,
        currency="usd",
        account_holder_name=person["full_name"],
        account_number=account_number,
        routing_number=routing_number,
        set_as_default=False,
    )
    ctx.db.execute(
        "UPDATE staff SET reimbursement_bank_account_id = ? WHERE id = ?", bank.id, target_id
    )
    audit.record(
        ctx,
        actor_id=actor.id,
        action="staff.reimbursement_account_set",
        subject_id=target_id,
        bank_account_id=bank.id,
        last4=bank.last4,
    )
    return load_staff(ctx, target_id)
