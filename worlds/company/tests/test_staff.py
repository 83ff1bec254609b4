"""Staff: listing, onboarding (company and chat), offboarding, and reimbursement accounts."""

from __future__ import annotations

import pytest
from company_support import as_, calls_records, count, email, refused, row, rows, snapshot, staff_id

import seahaven

HIRE = {
    "full_name": "Kai Moreno",
    "email": "kai@acme-robotics.test",
    "title": "Sales Engineer",
    "role": "employee",
    "department": "sales",
    "chat_handle": "kai",
    "timezone": "Europe/Madrid",
}


def _channels_of(instance: seahaven.Instance, chat_user_id: str) -> list[str]:
    return [
        item["name"]
        for item in rows(
            instance,
            "SELECT c.name FROM chat.memberships AS m JOIN chat.channels AS c"
            " ON c.id = m.channel_id WHERE m.user_id = ? ORDER BY c.name",
            chat_user_id,
        )
    ]


@pytest.mark.seahaven(fixture="acme", startup=as_("priya"))
def test_onboarding_writes_the_staff_record_and_the_chat_account(
    instance: seahaven.Instance,
) -> None:
    rafael = staff_id(instance, "rafael")
    hired = instance.call(
        "onboard_employee", manager_id=rafael, channels_to_join=["#engineering", "sales"], **HIRE
    )
    assert (hired.full_name, hired.role, hired.department, hired.manager_id, hired.status) == (
        "Kai Moreno",
        "employee",
        "sales",
        rafael,
        "active",
    )
    account = row(instance, "SELECT * FROM chat.users WHERE id = ?", hired.chat_user_id)
    assert (account["handle"], account["display_name"], account["title"], account["role"]) == (
        "kai",
        "Kai Moreno",
        "Sales Engineer",
        "member",
    )
    assert account["timezone"] == "Europe/Madrid"
    # #company, the department's channel, and the one extra (sales was named twice over).
    assert _channels_of(instance, hired.chat_user_id) == ["company", "engineering", "sales"]
    welcome = row(
        instance,
        "SELECT m.text, u.handle FROM chat.messages AS m JOIN chat.users AS u ON u.id = m.user_id"
        " JOIN chat.channels AS c ON c.id = m.channel_id WHERE c.name = 'company'"
        " ORDER BY m.ts DESC LIMIT 1",
    )
    assert welcome == {
        "text": "Please welcome @kai, our new Sales Engineer (sales)!",
        "handle": "backoffice",
    }
    # One call, two stores: the change log tells them apart.
    touched = {(record.world, record.table) for record in calls_records(instance, 0)}
    assert touched == {
        ("main", "staff"),
        ("main", "audit_log"),
        ("chat", "users"),
        ("chat", "memberships"),
        ("chat", "messages"),
    }
    audit = row(instance, "SELECT actor_id, action FROM audit_log WHERE subject_id = ?", hired.id)
    assert audit == {"actor_id": staff_id(instance, "priya"), "action": "staff.onboarded"}


@pytest.mark.seahaven(fixture="empty")
def test_onboarding_creates_the_channels_the_back_office_keeps(
    instance: seahaven.Instance,
) -> None:
    founder = instance.call(
        "onboard_employee",
        full_name="Ada Founder",
        email="ada@new.test",
        title="Founder",
        role="admin",
        department="executive",
        chat_handle="ada",
    )
    finance = instance.call(
        "onboard_employee",
        full_name="Ben Ledger",
        email="ben@new.test",
        title="Controller",
        role="finance",
        department="finance",
        chat_handle="ben",
        manager_id=founder.id,
    )
    channels = {
        item["name"]: item["is_private"]
        for item in rows(instance, "SELECT name, is_private FROM chat.channels")
    }
    assert channels == {"company": 0, "leadership": 1, "finance": 0, "billing": 0}
    assert _channels_of(instance, founder.chat_user_id) == ["company", "leadership"]
    assert _channels_of(instance, finance.chat_user_id) == ["billing", "company", "finance"]
    admin = row(instance, "SELECT role FROM chat.users WHERE id = ?", founder.chat_user_id)
    assert admin == {"role": "admin"}


@pytest.mark.parametrize(
    ("change", "code", "says"),
    [
        ({"email": "SAM@acme-robotics.test"}, "ALREADY_EXISTS", "email sam@acme-robotics.test"),
        ({"chat_handle": "backoffice"}, "ALREADY_EXISTS", "handle @backoffice"),
        ({"manager_id": "emp_0000000000000000"}, "NOT_FOUND", "no such member of staff"),
        ({"manager": "nina"}, "INVALID_STATE", "has left the company"),
        ({"channels_to_join": ["sales", "nowhere"]}, "NOT_FOUND", "#nowhere"),
        ({"department": "legal"}, "INVALID_INPUT", "department"),
    ],
)
def test_a_refused_onboarding_writes_nothing_in_any_store(
    world: seahaven.World, change: dict[str, object], code: str, says: str
) -> None:
    with world.instance("acme", startup=as_("priya")) as inst:
        arguments: dict[str, object] = {**HIRE, **change}
        manager = arguments.pop("manager", None)
        if isinstance(manager, str):
            arguments["manager_id"] = staff_id(inst, manager)
        before = snapshot(inst)
        error = refused(inst, code, "onboard_employee", **arguments)
        assert says in error.message
        assert snapshot(inst) == before


@pytest.mark.seahaven(fixture="acme", startup=as_("priya"))
def test_an_archived_channel_is_refused_before_anyone_is_created(
    instance: seahaven.Instance,
) -> None:
    from chat_world.tools.channels import archive_channel, lookup_channel_by_name

    with instance.bulk() as ctx:
        sales = ctx.worlds.chat.call(lookup_channel_by_name, name="sales")
        ctx.worlds.chat.call(archive_channel, channel_id=sales.id)
    before = snapshot(instance)
    refused(
        instance,
        "INVALID_STATE",
        "onboard_employee",
        channels_to_join=["sales"],
        **{**HIRE, "department": "support"},
    )
    assert snapshot(instance) == before


@pytest.mark.seahaven(fixture="acme")
def test_list_staff_pages_alphabetically_and_filters(instance: seahaven.Instance) -> None:
    names: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = instance.call("list_staff", limit=4, cursor=cursor)
        names.extend(person.full_name for person in page.staff)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert names == sorted(names) and len(names) == len(set(names)) == 11
    assert "Nina Kowalski" not in names
    gone = instance.call("list_staff", status="inactive")
    assert [person.full_name for person in gone.staff] == ["Nina Kowalski"]
    everyone = instance.call("list_staff", status=None, limit=100)
    assert len(everyone.staff) == 12
    finance = instance.call("list_staff", department="finance")
    assert [person.full_name for person in finance.staff] == ["Carla Mendes", "Tom Becker"]
    admins = instance.call("list_staff", role="admin")
    assert [person.full_name for person in admins.staff] == ["Dana Whitfield", "Marcus Lee"]
    by_email = instance.call("list_staff", email=email("LENA"))
    assert [person.full_name for person in by_email.staff] == ["Lena Fischer"]


@pytest.mark.seahaven(fixture="acme")
def test_a_cursor_only_works_for_the_listing_that_issued_it(instance: seahaven.Instance) -> None:
    cursor = instance.call("list_staff", limit=2).next_cursor
    assert cursor is not None
    refused(instance, "INVALID_INPUT", "list_staff", limit=2, cursor=cursor, role="admin")
    refused(instance, "INVALID_INPUT", "list_invoices", cursor=cursor)
    refused(instance, "INVALID_INPUT", "list_staff", cursor="not-a-cursor!")


@pytest.mark.seahaven(fixture="acme", startup=as_("sam"))
def test_get_staff_reads_anyone_and_refuses_unknown_or_malformed_ids(
    instance: seahaven.Instance,
) -> None:
    nina = instance.call("get_staff", staff_id=staff_id(instance, "nina"))
    assert (nina.status, nina.end_date) == ("inactive", "2026-06-01")
    refused(instance, "NOT_FOUND", "get_staff", staff_id="emp_0000000000000000")
    error = refused(instance, "INVALID_INPUT", "get_staff", staff_id="sam")
    assert error.details == {
        "violations": [
            {"field": "staff_id", "message": "String should match pattern '^emp_[0-9a-f]{16}$'"}
        ]
    }


@pytest.mark.seahaven(fixture="acme", startup=as_("priya"))
def test_offboarding_ends_the_job_and_deactivates_the_chat_account(
    instance: seahaven.Instance,
) -> None:
    jonas = staff_id(instance, "jonas")
    gone = instance.call("offboard_employee", staff_id=jonas, note="Moving abroad")
    assert (gone.status, gone.end_date) == ("inactive", "2026-06-01")
    assert row(instance, "SELECT deactivated FROM chat.users WHERE id = ?", gone.chat_user_id) == {
        "deactivated": 1
    }
    refused(instance, "INVALID_STATE", "offboard_employee", staff_id=jonas)
    refused(instance, "FORBIDDEN", "offboard_employee", staff_id=staff_id(instance, "priya"))
    refused(instance, "NOT_FOUND", "offboard_employee", staff_id="emp_0000000000000000")
    # Two admins: one may go, the last may not.
    instance.call("offboard_employee", staff_id=staff_id(instance, "marcus"))
    before = snapshot(instance)
    error = refused(
        instance, "INVALID_STATE", "offboard_employee", staff_id=staff_id(instance, "dana")
    )
    assert "last active admin" in error.message
    assert snapshot(instance) == before


@pytest.mark.seahaven(fixture="acme", startup=as_("aiko"))
def test_someone_else_s_reimbursement_account_needs_a_manager_role(
    instance: seahaven.Instance,
) -> None:
    before = snapshot(instance)
    refused(
        instance,
        "FORBIDDEN",
        "set_reimbursement_account",
        account_number="11112222",
        staff_id=staff_id(instance, "omar"),
    )
    assert snapshot(instance) == before


@pytest.mark.seahaven(fixture="acme", startup=as_("priya"))
def test_hr_puts_an_account_on_file_for_someone_else(instance: seahaven.Instance) -> None:
    omar = staff_id(instance, "omar")
    accounts_before = count(instance, "payments.bank_accounts")
    updated = instance.call(
        "set_reimbursement_account",
        account_number="FR7630006000011234567890189",
        staff_id=omar,
    )
    assert count(instance, "payments.bank_accounts") == accounts_before + 1
    registered = row(
        instance,
        "SELECT account_holder_name, currency, last4 FROM payments.bank_accounts WHERE id = ?",
        updated.reimbursement_bank_account_id,
    )
    assert registered == {"account_holder_name": "Omar Haddad", "currency": "usd", "last4": "0189"}
    refused(
        instance,
        "INVALID_STATE",
        "set_reimbursement_account",
        account_number="11112222",
        staff_id=staff_id(instance, "nina"),
    )


@pytest.mark.seahaven(fixture="empty")
def test_no_employee_account_before_the_company_has_its_own(instance: seahaven.Instance) -> None:
    instance.call(
        "onboard_employee",
        full_name="Ada Founder",
        email="ada@new.test",
        title="Founder",
        role="admin",
        department="executive",
        chat_handle="ada",
    )
    error = refused(instance, "INVALID_STATE", "set_reimbursement_account", account_number="1234")
    assert "no usd bank account of its own" in error.message
    assert count(instance, "payments.bank_accounts") == 0
    instance.call(
        "pay_add_bank_account",
        currency="usd",
        account_holder_name="New Co",
        account_number="99990000",
    )
    me = instance.call("set_reimbursement_account", account_number="1234")
    default = row(
        instance,
        "SELECT account_holder_name FROM payments.bank_accounts WHERE default_for_currency = 1",
    )
    assert default == {"account_holder_name": "New Co"}
    assert me.reimbursement_bank_account_id is not None
