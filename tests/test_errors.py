"""The exception hierarchy: ``WorldBug`` for the author, ``ToolError`` and its three framework
subclasses for the agent, ``to_dict()``, and ``error_type``, which a world may not set."""

from typing import Any, ClassVar

import pytest
from sample_worlds import memo_world

import seahaven


class Missing(seahaven.ToolError):
    """An error shape of a world's own: the thing asked for is not there."""

    def __init__(self, what: str, wanted: str) -> None:
        details = {"what": what, "wanted": wanted}
        super().__init__("MISSING", f"there is no {what} called {wanted}", details)


def test_the_hierarchy() -> None:
    assert issubclass(seahaven.SeahavenError, Exception)
    assert issubclass(seahaven.WorldBug, seahaven.SeahavenError)
    assert issubclass(seahaven.ToolError, seahaven.SeahavenError)
    for subclass in (seahaven.ArgumentError, seahaven.DbError, seahaven.UnknownTool):
        assert issubclass(subclass, seahaven.ToolError)
    assert not issubclass(seahaven.WorldBug, seahaven.ToolError)
    assert not issubclass(seahaven.ToolError, seahaven.WorldBug)


def test_tool_error_carries_code_message_and_details() -> None:
    error = seahaven.ToolError("RATE_LIMITED", "slow down", {"retry_after": 3})
    assert (error.code, error.message, error.details) == (
        "RATE_LIMITED",
        "slow down",
        {"retry_after": 3},
    )
    assert str(error) == "slow down"
    assert error.to_dict() == {
        "code": "RATE_LIMITED",
        "message": "slow down",
        "details": {"retry_after": 3},
    }


def test_details_default_to_none_and_are_copied() -> None:
    assert seahaven.ToolError("X", "y").to_dict() == {"code": "X", "message": "y", "details": None}
    given = {"a": 1}
    error = seahaven.ToolError("X", "y", given)
    given["a"] = 2
    assert error.details == {"a": 1}


def test_a_worlds_own_error_reaches_the_caller_unchanged() -> None:
    world = memo_world("errors")

    @world.tool
    def open_memo(ctx: seahaven.Ctx, memo: str) -> dict[str, Any]:
        """Look one memo up by id."""
        found = ctx.db.one("SELECT id, gist FROM memos WHERE id = ?", memo)
        if found is None:
            raise Missing("memo", memo)
        return found

    with world.instance() as inst, pytest.raises(Missing) as caught:
        inst.call("open_memo", memo="m404")
    assert caught.value.to_dict() == {
        "code": "MISSING",
        "message": "there is no memo called m404",
        "details": {"what": "memo", "wanted": "m404"},
    }


def test_argument_error_lists_its_violations() -> None:
    violations = [
        {"loc": ["a"], "msg": "Input should be a valid integer", "type": "int_type"},
        {"loc": ["b", 0], "msg": "Field required", "type": "missing"},
    ]
    error = seahaven.ArgumentError("add", violations)
    # Each in pydantic's spelling and in the one clients written for the reference read: the
    # reference's path is one string, the parts joined by dots.
    both = [
        {**violations[0], "path": "a", "message": violations[0]["msg"]},
        {**violations[1], "path": "b.0", "message": violations[1]["msg"]},
    ]
    assert error.violations == both
    assert error.code == "invalid_arguments"
    assert error.message == (
        "2 invalid arguments for add: a: Input should be a valid integer; b.0: Field required"
    )
    assert error.to_dict()["details"] == {"tool": "add", "violations": both}


def test_an_argument_violation_repeats_no_more_of_the_callers_keys_than_it_needs() -> None:
    world = seahaven.World(
        name="memos", version="1.0.0", schema="", state_format="seahaven.state/1"
    )

    @world.tool
    def note(ctx: seahaven.Ctx, tags: dict[str, int]) -> None:
        """Keep counted tags."""

    key = "k" * 100_000
    with world.instance() as inst, pytest.raises(seahaven.ArgumentError) as caught:
        inst.call("note", tags={key: "not a number"})
    [violation] = caught.value.violations
    assert violation["loc"][0] == "tags"
    assert violation["path"] == ".".join(violation["loc"]) and len(violation["path"]) < 300
    assert len(violation["loc"][1]) < 300 and violation["loc"][1].startswith("kkk")
    assert len(caught.value.message) < 1000


def test_argument_error_names_each_field_by_its_dotted_path() -> None:
    violations = [
        {"loc": ["address", "city"], "msg": "Field required", "type": "missing"},
        {"loc": [], "msg": "Unexpected keyword argument", "type": "unexpected_keyword_argument"},
        {"loc": ["tags", 2], "type": "string_type"},
    ]
    assert seahaven.ArgumentError("move", violations).by_field() == [
        {"field": "address.city", "message": "Field required"},
        {"field": "(arguments)", "message": "Unexpected keyword argument"},
        {"field": "tags.2", "message": "invalid"},
    ]


def test_db_error_keeps_sqlites_text_off_the_message() -> None:
    error = seahaven.DbError("UNIQUE constraint failed: memos.id", 1555)
    assert (error.sqlite_message, error.sqlite_code, error.refusals) == (
        "UNIQUE constraint failed: memos.id",
        1555,
        (),
    )
    assert error.code == "db_error"
    assert "UNIQUE" not in error.message
    assert "UNIQUE" not in str(error.to_dict())


def test_db_error_may_carry_refusals_and_a_message_a_sql_door_chose() -> None:
    error = seahaven.DbError(
        "not authorized", 23, refusals=["read of table 'secrets'"], message="read refused"
    )
    assert error.refusals == ("read of table 'secrets'",)
    assert error.message == "read refused"


def test_unknown_tool_names_the_tool() -> None:
    error = seahaven.UnknownTool("frobnicate")
    assert error.to_dict() == {
        "code": "unknown_tool",
        "message": "unknown tool: frobnicate",
        "details": {"name": "frobnicate"},
    }


@pytest.mark.parametrize(
    ("error", "error_type"),
    [
        (seahaven.UnknownTool("x"), "tool_not_found"),
        (seahaven.ArgumentError("x", []), "invalid_args"),
        (seahaven.DbError("boom"), "execution_error"),
        (seahaven.ToolError("X", "y"), "execution_error"),
        (Missing("memo", "m1"), "execution_error"),
    ],
)
def test_error_type_is_the_frameworks_category(error: seahaven.ToolError, error_type: str) -> None:
    assert error.error_type == error_type
    assert type(error).error_type == error_type


def test_a_subclass_that_sets_error_type_is_refused_where_it_is_written() -> None:
    with pytest.raises(seahaven.WorldBug, match="Sneaky sets error_type"):

        class Sneaky(seahaven.ToolError):
            error_type: ClassVar[str] = "tool_not_found"


def test_a_subclass_of_a_framework_error_may_not_set_it_either() -> None:
    with pytest.raises(seahaven.WorldBug, match="error_type"):

        class LooseArguments(seahaven.ArgumentError):
            error_type: ClassVar[str] = "execution_error"


def test_a_subclass_that_does_not_touch_error_type_inherits_it() -> None:
    class StrictArguments(seahaven.ArgumentError):
        pass

    assert StrictArguments("t", []).error_type == "invalid_args"
    assert Missing("a", "b").error_type == "execution_error"


def raised_from(error: seahaven.ToolError, cause: BaseException | None) -> seahaven.ToolError:
    """``error`` as ``raise error from cause`` leaves it."""
    try:
        raise error from cause
    except seahaven.ToolError as caught:
        return caught


def test_a_restated_argument_error_keeps_the_invalid_args_category() -> None:
    refused = seahaven.ArgumentError("t", [{"loc": ["n"], "msg": "bad", "type": "int_type"}])
    restated = raised_from(Missing("argument", "n"), refused)
    assert (restated.code, restated.error_type) == ("MISSING", "invalid_args")
    # Restated twice over (a composite's handlers), the category still holds.
    assert raised_from(seahaven.ToolError("AGAIN", "x"), restated).error_type == "invalid_args"
    # The class keeps its own; only an error raised from refused arguments changes.
    assert Missing.error_type == "execution_error"
    assert Missing("memo", "m1").error_type == "execution_error"
    assert raised_from(Missing("memo", "m1"), KeyError("k")).error_type == "execution_error"
    assert raised_from(Missing("memo", "m1"), seahaven.DbError("x")).error_type == (
        "execution_error"
    )
    # A framework category of another kind is never overridden.
    assert raised_from(seahaven.UnknownTool("x"), refused).error_type == "tool_not_found"


def test_a_worlds_handler_restating_argument_errors_answers_invalid_args() -> None:
    world = memo_world("restating")

    @world.middleware
    def handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        try:
            return next_(ctx, call)
        except seahaven.ArgumentError as refused:
            raise Missing("argument", ",".join(v["field"] for v in refused.by_field())) from refused

    @world.tool
    def count(ctx: seahaven.Ctx, n: int) -> int:
        """Answer n, or a world error for a negative one."""
        if n < 0:
            raise Missing("count", str(n))
        return n

    with world.instance() as inst:
        with pytest.raises(Missing) as refused:
            inst.call("count", n="five")
        assert (refused.value.code, refused.value.error_type) == ("MISSING", "invalid_args")
        with pytest.raises(Missing) as own:
            inst.call("count", n=-1)
        assert own.value.error_type == "execution_error"


def test_world_bug_is_a_plain_exception_with_a_message() -> None:
    bug = seahaven.WorldBug("tool 'x', parameter 'y': fix this")
    assert str(bug) == "tool 'x', parameter 'y': fix this"
    assert not hasattr(bug, "to_dict")


def test_a_client_is_told_the_message_without_the_servers_paths() -> None:
    from seahaven.errors import client_message

    error = seahaven.WorldBug(
        "/srv/worlds/shop/fixtures/a/fixture.yaml: claims fixture id 'b', which "
        "/srv/worlds/shop/fixtures/b/fixture.yaml claims too; see GET /fixtures or "
        "https://example.org/docs/fixtures, and C:\\Users\\ops\\shop\\fixture.yaml"
    )
    text = client_message(error)
    assert "/srv" not in text and "ops" not in text
    assert text.count(".../fixture.yaml") == 3
    # Routes and URLs are not paths of this machine.
    assert "GET /fixtures" in text and "https://example.org/docs/fixtures" in text
    # Not a WorldBug, and not the framework's at all: the same rendering.
    assert client_message(OSError(2, "No such file", "/var/lib/x/y.db")).endswith("'.../y.db'")
    # The author may give the client a wording of their own; str() stays the operator's.
    told = seahaven.WorldBug("in /srv/a/b: broken", client_text="the fixture is broken")
    assert (client_message(told), str(told)) == ("the fixture is broken", "in /srv/a/b: broken")


def test_an_unknown_fixture_tells_a_client_which_there_are_without_the_directory(
    tmp_path: Any,
) -> None:
    from seahaven.errors import client_message

    world = seahaven.World(
        name="cellar",
        version="0.1.0",
        schema="CREATE TABLE casks (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
        fixtures_dir=tmp_path / "fixtures",
        work_dir=tmp_path,
    )
    with world.instance() as instance:
        instance.freeze("stocked", "Three casks")
    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("vintage")
    assert str(tmp_path) in str(raised.value)
    told = client_message(raised.value)
    assert str(tmp_path) not in told
    assert "'vintage'" in told and "stocked" in told
