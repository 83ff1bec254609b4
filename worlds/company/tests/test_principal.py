"""The acting principal: who the instance acts as, set at startup, and the company's first hire."""

from __future__ import annotations

import pytest
from company_support import as_, count, email, refused, row, snapshot, staff_id
from company_world.access import PRINCIPAL_KEY

import seahaven


@pytest.mark.seahaven(fixture="acme")
def test_without_a_principal_the_instance_acts_as_the_first_administrator(
    instance: seahaven.Instance,
) -> None:
    me = instance.call("whoami")
    assert (me.full_name, me.role, me.start_date) == ("Dana Whitfield", "admin", "2023-02-01")


@pytest.mark.parametrize("spelling", ["id", "email", "EMAIL"])
def test_a_principal_is_named_by_staff_id_or_email(world: seahaven.World, spelling: str) -> None:
    with world.instance("acme") as probe:
        wanted = staff_id(probe, "sam")
    principal = {"id": wanted, "email": email("sam"), "EMAIL": email("sam").upper()}[spelling]
    with world.instance("acme", startup={"principal": principal}) as inst:
        me = inst.call("whoami")
        assert (me.id, me.full_name, me.role) == (wanted, "Sam Whitaker", "employee")


@pytest.mark.parametrize(
    ("principal", "says"),
    [
        ("nobody@acme-robotics.test", "is not on the company's staff"),
        ("emp_0000000000000000", "is not on the company's staff"),
        (email("nina"), "has left the company"),
        ("   ", "must be a staff id"),
    ],
)
def test_an_unknown_or_departed_principal_refuses_the_instance(
    world: seahaven.World, principal: str, says: str
) -> None:
    with pytest.raises(seahaven.WorldBug, match=says):
        world.instance("acme", startup={"principal": principal})


def test_an_unknown_startup_keyword_is_refused_before_anything_starts(
    world: seahaven.World,
) -> None:
    with pytest.raises(seahaven.WorldBug, match="unknown startup keyword 'principle'"):
        world.instance("acme", startup={"principle": email("sam")})


@pytest.mark.seahaven(fixture="acme", startup=as_("omar"))
def test_a_principal_removed_behind_the_products_back_is_the_authors_bug(
    instance: seahaven.Instance,
) -> None:
    assert instance.call("whoami").full_name == "Omar Haddad"
    with instance.bulk() as ctx:
        # The tools never remove anyone; only SQL from outside the product can.
        ctx.db.execute("DELETE FROM staff WHERE email = ?", email("omar"))
    with pytest.raises(seahaven.WorldBug, match="was removed from staff after the instance"):
        instance.call("whoami")


@pytest.mark.seahaven(fixture="acme", startup=as_("sam"))
def test_a_principal_who_leaves_during_the_run_can_do_nothing_more(
    instance: seahaven.Instance,
) -> None:
    assert instance.call("whoami").status == "active"
    with instance.bulk() as ctx:
        ctx.db.execute(
            "UPDATE staff SET status = 'inactive', end_date = '2026-06-01' WHERE email = ?",
            email("sam"),
        )
    error = refused(instance, "FORBIDDEN", "whoami")
    assert "has left the company" in error.message
    refused(instance, "FORBIDDEN", "chat_list_channels")


@pytest.mark.seahaven(fixture="empty")
def test_with_nobody_on_staff_only_the_first_hire_may_happen(
    instance: seahaven.Instance,
) -> None:
    before = snapshot(instance)
    for tool, arguments in (
        ("whoami", {}),
        ("list_staff", {}),
        ("pay_get_balance", {}),
        ("chat_list_channels", {}),
        ("eu_pay_list_charges", {}),
    ):
        error = refused(instance, "FORBIDDEN", tool, **arguments)
        assert "onboard its first administrator" in error.message
    assert snapshot(instance) == before


@pytest.mark.seahaven(fixture="empty")
def test_the_first_hire_must_be_an_admin_with_no_manager(instance: seahaven.Instance) -> None:
    hire = {
        "full_name": "Ada Founder",
        "email": "ada@new.test",
        "title": "Founder",
        "department": "executive",
        "chat_handle": "ada",
    }
    error = refused(instance, "INVALID_INPUT", "onboard_employee", role="employee", **hire)
    assert error.details == {
        "violations": [
            {
                "field": "role",
                "message": "the company has nobody on staff yet; its first hire is its admin",
            }
        ]
    }
    refused(
        instance,
        "INVALID_INPUT",
        "onboard_employee",
        role="admin",
        manager_id="emp_0123456789abcdef",
        **hire,
    )
    assert count(instance, "staff") == 0
    assert count(instance, "chat.users") == 1  # only the back office's own account


@pytest.mark.seahaven(fixture="empty")
def test_the_first_hire_founds_the_company_and_becomes_the_principal(
    instance: seahaven.Instance,
) -> None:
    founder = instance.call(
        "onboard_employee",
        full_name="Ada Founder",
        email="Ada@New.test",
        title="Founder",
        role="admin",
        department="executive",
        chat_handle="ada",
        start_date="2026-01-05",
    )
    assert (founder.email, founder.start_date, founder.manager_id) == (
        "ada@new.test",
        "2026-01-05",
        None,
    )
    assert instance.call("whoami").id == founder.id
    # Nobody onboarded the founder: the audit trail says so.
    audited = row(
        instance, "SELECT actor_id, action FROM audit_log WHERE subject_id = ?", founder.id
    )
    assert audited == {"actor_id": None, "action": "staff.onboarded"}
    # The next hire is onboarded by the founder, and may not be onboarded by nobody.
    second = instance.call(
        "onboard_employee",
        full_name="Bo Second",
        email="bo@new.test",
        title="Engineer",
        role="employee",
        department="engineering",
        chat_handle="bo",
        manager_id=founder.id,
    )
    audited = row(instance, "SELECT actor_id FROM audit_log WHERE subject_id = ?", second.id)
    assert audited == {"actor_id": founder.id}
    assert second.start_date == "2026-06-01"  # today, on the fixture's clock


def test_the_principal_lives_in_the_companys_own_state(world: seahaven.World) -> None:
    with world.instance("acme", startup=as_("tom")) as inst, inst.bulk() as ctx:
        assert ctx.state[PRINCIPAL_KEY] == staff_id(inst, "tom")
        # The chat world keeps its own acting user, the integration's account.
        chat_state = ctx.worlds.chat.state
        chat_user = row(inst, "SELECT id FROM chat.users WHERE handle = 'backoffice'")["id"]
        assert chat_state["user_id"] == chat_user
        assert PRINCIPAL_KEY not in chat_state
