"""The pytest plugin: the ``world`` and ``instance`` fixtures, the marker, and ``--seahaven-world``.

Each test writes a small world project into pytester's directory and runs pytest
on it in process; the plugin is active there through its ``pytest11`` entry point.
"""

from __future__ import annotations

import importlib.metadata
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

NOW = "2031-03-14T08:30:00.000Z"

WORLD_SOURCE = '''
import seahaven

world = seahaven.World(
    name="plugworld",
    version="1.0.0",
    schema="CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@world.tool
def jot(ctx: seahaven.Ctx, id: str, gist: str) -> str:
    """File a memo and answer its id."""
    ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", id, gist)
    return id


@world.instance_startup
def greet(ctx: seahaven.Ctx, *, greeting: str = "none") -> None:
    """Record the startup keyword, so a test can see it arrived."""
    ctx.state["greeting"] = greeting
'''


def write_project(
    pytester: pytest.Pytester,
    *,
    package: str = "plugworld",
    project_name: str | None = None,
    extra_pyproject: str = "",
    attribute: str = "world",
    module: str = "__init__",
) -> Path:
    """A world project: ``pyproject.toml`` and a package holding the world."""
    name = project_name if project_name is not None else package
    pyproject = f'[project]\nname = "{name}"\nversion = "1.0.0"\n{extra_pyproject}\n'
    pyproject += "[tool.pytest.ini_options]\naddopts = '-p no:cacheprovider'\n"
    pytester.makefile(".toml", pyproject=pyproject)
    directory = pytester.path / package
    directory.mkdir()
    (directory / "__init__.py").write_text("", encoding="utf-8")
    source = WORLD_SOURCE.replace("world = seahaven.World", f"{attribute} = seahaven.World")
    source = source.replace("@world.", f"@{attribute}.")
    (directory / f"{module}.py").write_text(source, encoding="utf-8")
    return directory


def freeze_base(pytester: pytest.Pytester, package: str = "plugworld") -> None:
    """Freeze fixture ``base``, holding memo m1, into the project's ``fixtures/``."""
    pytester.syspathinsert()
    module = __import__(package)
    world = module.world
    assert world.fixtures_dir == pytester.path / "fixtures"
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.call("jot", id="m1", gist="from the fixture")
        inst.freeze("base", "Memo m1 and nothing else.")


def run_tests(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_world=textwrap.dedent(source))
    return pytester.runpytest(*args)


# --- registration ---------------------------------------------------------------------------------


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    points = importlib.metadata.entry_points(group="pytest11")
    assert {point.name: point.value for point in points}["seahaven"] == "seahaven.pytest_plugin"


def test_the_plugin_is_active_without_a_conftest(pytester: pytest.Pytester) -> None:
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.seahaven(fixture, *, seed=None*"])
    helped = pytester.runpytest("--help")
    helped.stdout.fnmatch_lines(["*--seahaven-world*"])


# --- the two fixtures -----------------------------------------------------------------------------


def test_a_module_marker_gives_each_test_its_own_copy_of_the_fixture(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    freeze_base(pytester)
    result = run_tests(
        pytester,
        """
        import pytest
        import seahaven

        pytestmark = pytest.mark.seahaven(fixture="base")
        seen = []


        def test_writes(instance: seahaven.Instance) -> None:
            assert instance.fixture == "base"
            instance.call("jot", id="m2", gist="written by a test")
            assert instance.inspect().one("SELECT count(*) AS n FROM memos") == {"n": 2}


        def test_sees_the_fixture_untouched(instance: seahaven.Instance) -> None:
            assert instance.inspect().rows("SELECT id FROM memos") == [{"id": "m1"}]
            assert instance.change_log() == []


        def test_world_is_one_object_per_session(world: seahaven.World) -> None:
            seen.append(world)


        def test_world_is_the_same_object(world: seahaven.World) -> None:
            assert seen == [world] and seen[0] is world
            assert world.name == "plugworld"
        """,
    )
    result.assert_outcomes(passed=4)


def test_every_marker_keyword_reaches_world_instance(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    freeze_base(pytester)
    result = run_tests(
        pytester,
        """
        import pytest
        import seahaven


        @pytest.mark.seahaven("base", clock_mode="fixed", now="2031-07-01T00:00:00.000Z")
        def test_positional_fixture_now_and_clock_mode(instance: seahaven.Instance) -> None:
            assert instance.fixture == "base"
            assert instance.clock.mode == "fixed"
            assert instance.clock.iso() == "2031-07-01T00:00:00.000Z"


        @pytest.mark.seahaven(fixture=None, now="2026-01-01T00:00:00.000Z", clock_mode="tick")
        def test_fixture_none_is_a_blank_instance(instance: seahaven.Instance) -> None:
            assert instance.fixture is None
            assert instance.inspect().rows("SELECT id FROM memos") == []
            assert instance.clock.mode == "tick"
            assert instance.clock.iso() == "2026-01-01T00:00:00.000Z"


        @pytest.mark.seahaven(fixture="base", seed=7)
        def test_seed(instance: seahaven.Instance, world: seahaven.World) -> None:
            with world.instance("base", seed=7) as same, world.instance("base", seed=8) as other:
                assert instance.seed == same.seed != other.seed


        @pytest.mark.seahaven(fixture="base", setup_sql="DELETE FROM memos")
        def test_setup_sql(instance: seahaven.Instance) -> None:
            assert instance.setup_sql == "DELETE FROM memos"
            assert instance.inspect().rows("SELECT id FROM memos") == []


        @pytest.mark.seahaven(fixture=None, startup={"greeting": "hello"})
        def test_startup(instance: seahaven.Instance) -> None:
            assert instance.state()["startup"] == {"greeting": "hello"}


        @pytest.mark.seahaven(
            fixture=None, control_tools=True, state_format="seahaven.state+calls/1"
        )
        def test_control_tools_and_state_format(instance: seahaven.Instance) -> None:
            assert instance.control_tools is True
            assert instance.state_format == "seahaven.state+calls/1"
            assert instance.state()["state"]["calls"] == []
        """,
    )
    result.assert_outcomes(passed=6)


def test_the_instance_is_destroyed_after_a_pass_and_after_a_failure(
    pytester: pytest.Pytester,
) -> None:
    write_project(pytester)
    result = run_tests(
        pytester,
        """
        import pytest
        import seahaven

        pytestmark = pytest.mark.seahaven(fixture=None)
        made = []


        def test_passes(instance: seahaven.Instance) -> None:
            made.append(instance)


        def test_fails(instance: seahaven.Instance) -> None:
            made.append(instance)
            assert False, "this test fails on purpose"


        def test_both_were_destroyed() -> None:
            assert len(made) == 2
            for instance in made:
                if instance.storage == "disk":
                    assert not instance.state_path.parent.exists()
                with pytest.raises(seahaven.WorldBug, match="destroyed"):
                    instance.call("jot", id="late", gist="too late")
        """,
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*this test fails on purpose*"])


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_the_storage_option_is_the_default_of_every_instance_of_the_run(
    pytester: pytest.Pytester, storage: str
) -> None:
    write_project(pytester)
    result = run_tests(
        pytester,
        f"""
        import os
        import pytest
        import seahaven


        @pytest.mark.seahaven(fixture=None)
        def test_the_fixture(instance: seahaven.Instance) -> None:
            assert instance.storage == {storage!r}


        @pytest.mark.seahaven(fixture=None, storage="disk")
        def test_the_marker_names_its_own(instance: seahaven.Instance) -> None:
            assert instance.storage == "disk"


        def test_the_environment() -> None:
            assert os.environ["SEAHAVEN_STORAGE"] == {storage!r}
        """,
        "--seahaven-storage",
        storage,
    )
    result.assert_outcomes(passed=3)


# --- the marker's rules ---------------------------------------------------------------------------


def test_a_missing_marker_shows_both_spellings(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    result = run_tests(
        pytester,
        """
        import seahaven


        def test_unmarked(instance: seahaven.Instance) -> None:
            pass
        """,
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ['*@pytest.mark.seahaven(fixture="empty")*@pytest.mark.seahaven(fixture=None)*']
    )


def test_a_tests_marker_replaces_the_modules(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    freeze_base(pytester)
    result = run_tests(
        pytester,
        """
        import pytest
        import seahaven

        pytestmark = pytest.mark.seahaven(fixture="base")


        @pytest.mark.seahaven(fixture=None)
        def test_blank_overrides_the_module(instance: seahaven.Instance) -> None:
            assert instance.fixture is None


        @pytest.mark.seahaven(seed=7)
        def test_a_marker_without_a_fixture(instance: seahaven.Instance) -> None:
            pass


        class TestInAClass:
            pytestmark = pytest.mark.seahaven(fixture=None)

            def test_the_class_marker_wins(self, instance: seahaven.Instance) -> None:
                assert instance.fixture is None

            @pytest.mark.seahaven(fixture="base")
            def test_the_test_marker_wins(self, instance: seahaven.Instance) -> None:
                assert instance.fixture == "base"
        """,
    )
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ['*names no fixture*replaces the module\'s*(fixture="empty", seed=7)*']
    )


@pytest.mark.parametrize(
    ("source", "node"),
    [
        (
            """
            @pytest.mark.seahaven(fixture=None)
            @pytest.mark.seahaven(fixture=None, seed=1)
            def test_twice(instance: seahaven.Instance) -> None:
                pass
            """,
            "test_world.py::test_twice",
        ),
        (
            """
            @pytest.mark.seahaven(fixture=None)
            @pytest.mark.seahaven(fixture=None, seed=1)
            class TestTwice:
                def test_in_class(self, instance: seahaven.Instance) -> None:
                    pass
            """,
            "test_world.py::TestTwice",
        ),
        (
            """
            pytestmark = [pytest.mark.seahaven(fixture=None), pytest.mark.seahaven(fixture=None)]


            def test_in_module(instance: seahaven.Instance) -> None:
                pass
            """,
            "test_world.py",
        ),
    ],
    ids=["test", "class", "module"],
)
def test_two_markers_in_one_place_are_refused_naming_the_node(
    pytester: pytest.Pytester, source: str, node: str
) -> None:
    write_project(pytester)
    header = "import pytest\nimport seahaven\n\n"
    result = run_tests(pytester, header + textwrap.dedent(source))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*{node} carries 2 @pytest.mark.seahaven markers*keep one*"])


def test_a_marker_the_plugin_cannot_read_is_refused(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    result = run_tests(
        pytester,
        """
        import pytest
        import seahaven


        @pytest.mark.seahaven(fixture=None, colour="blue")
        def test_unknown_keyword(instance: seahaven.Instance) -> None:
            pass


        @pytest.mark.seahaven("a", "b")
        def test_two_positionals(instance: seahaven.Instance) -> None:
            pass


        @pytest.mark.seahaven("a", fixture="b")
        def test_fixture_twice(instance: seahaven.Instance) -> None:
            pass


        @pytest.mark.seahaven(fixture="missing")
        def test_a_fixture_that_is_not_there(instance: seahaven.Instance) -> None:
            pass
        """,
    )
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines_random(
        [
            "*does not take colour*",
            "*fixture as its one positional argument*",
            "*names its fixture twice*",
            "*seahaven: world 'plugworld' has no fixture 'missing'*World(fixtures_dir=...)*",
        ]
    )
    # A refusal is the one line that names the fix, not a trace through the framework.
    assert "seahaven/instance.py" not in result.stdout.str()


def test_a_test_without_the_fixtures_is_left_alone(pytester: pytest.Pytester) -> None:
    # No world project here at all: a run that does not ask for the fixtures never looks.
    result = run_tests(
        pytester,
        """
        def test_plain() -> None:
            assert 1 + 1 == 2
        """,
    )
    result.assert_outcomes(passed=1)


# --- finding the world ----------------------------------------------------------------------------


def test_the_package_is_the_normalised_project_name(pytester: pytest.Pytester) -> None:
    write_project(pytester, package="plug_world_name", project_name="Plug-World.Name")
    result = run_tests(
        pytester,
        """
        import seahaven


        def test_found(world: seahaven.World) -> None:
            assert world.name == "plugworld"
        """,
    )
    result.assert_outcomes(passed=1)


def test_a_declared_seahaven_worlds_entry_point_names_the_world(
    pytester: pytest.Pytester,
) -> None:
    write_project(
        pytester,
        package="epworld",
        project_name="something-else",
        attribute="the_world",
        module="core",
        extra_pyproject=(
            '\n[project.entry-points."seahaven.worlds"]\nmemos = "epworld.core:the_world"\n'
        ),
    )
    result = run_tests(
        pytester,
        """
        import pytest
        import seahaven


        @pytest.mark.seahaven(fixture=None)
        def test_found(instance: seahaven.Instance, world: seahaven.World) -> None:
            import epworld.core

            assert world is epworld.core.the_world
            assert instance.world is world
        """,
    )
    result.assert_outcomes(passed=1)


def test_the_option_names_a_world_the_convention_misses(pytester: pytest.Pytester) -> None:
    write_project(
        pytester, package="oddlayout", project_name="unrelated", attribute="custom", module="w"
    )
    source = """
        import seahaven


        def test_found(world: seahaven.World) -> None:
            assert world.name == "plugworld"
        """
    result = run_tests(pytester, source, "--seahaven-world", "oddlayout.w:custom")
    result.assert_outcomes(passed=1)

    without = pytester.runpytest()
    without.assert_outcomes(errors=1)
    without.stdout.fnmatch_lines(["*seahaven: cannot import 'unrelated'*"])


def test_the_option_refuses_something_that_is_not_a_world(pytester: pytest.Pytester) -> None:
    write_project(pytester)
    source = """
        import seahaven


        def test_found(world: seahaven.World) -> None:
            pass
        """
    result = run_tests(pytester, source, "--seahaven-world", "plugworld:jot")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*plugworld:jot is a *, not a seahaven.World*"])


def test_prepared_on_repeat_names_a_statement_sqlite_prepares_at_every_execution() -> None:
    import seahaven
    from seahaven.pytest_plugin import prepared_on_repeat

    world = seahaven.World(
        name="repeats",
        version="1.0.0",
        schema="CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL, n INTEGER) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def bare(ctx: seahaven.Ctx, gist: str) -> list[str]:
        """Memos of one gist, in order: a bare parameter beside ORDER BY."""
        rows = ctx.db.rows("SELECT id FROM memos WHERE gist = ? ORDER BY n", gist)
        return [row["id"] for row in rows]

    @world.tool
    def cast(ctx: seahaven.Ctx, gist: str) -> list[str]:
        """The same, the parameter bound as TEXT."""
        rows = ctx.db.rows("SELECT id FROM memos WHERE gist = CAST(? AS TEXT) ORDER BY n", gist)
        return [row["id"] for row in rows]

    @world.tool(transaction=False)
    def nothing(ctx: seahaven.Ctx) -> int:
        """No statement at all, not even a transaction's."""
        return 0

    with world.instance() as inst:
        assert prepared_on_repeat(inst, [("cast", {"gist": "g"})]) == []
        assert prepared_on_repeat(inst, [("bare", {"gist": "g"})]) != []
        with pytest.raises(seahaven.SeahavenError, match="nothing was watched"):
            prepared_on_repeat(inst, [("nothing", {})])
        assert inst.db.conn.authorizer is None
