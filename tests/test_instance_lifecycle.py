"""Instances: making one, its members, calling it, destroying it, and its one lock."""

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sample_worlds import cafe_world, memo_world, till_world

import seahaven
from seahaven.calls import concurrency
from seahaven.stores.db import is_closing

# How long a thread may take to reach a point it is expected to reach. Only a
# failing test ever waits this long.
REACH = 10.0
# How long to watch for something that must *not* happen while another thread
# holds a call open.
SETTLE = 0.2


@pytest.fixture
def no_gate() -> Iterator[None]:
    """Remove the process-wide concurrency gate, so its size cannot decide a threading test."""
    before = concurrency.concurrency()
    concurrency.set_concurrency(0)
    yield
    concurrency.set_concurrency(before)


def declare(name: str = "lifecycle", **options: Any) -> seahaven.World:
    """A memo world whose tools file, count and echo; tests add ones that block or nest."""
    world = memo_world(name, **options)

    @world.tool
    def memo(ctx: seahaven.Ctx, gist: str) -> dict[str, Any]:
        """File a memo under an id the instance mints."""
        minted = f"memo-{ctx.ids.uuid()}"
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", minted, gist)
        return {"id": minted, "gist": gist}

    @world.tool
    def count(ctx: seahaven.Ctx) -> int:
        """The number of memos on file."""
        counted = ctx.db.one("SELECT count(*) AS n FROM memos")
        assert counted is not None
        return int(counted["n"])

    @world.tool
    def rename(ctx: seahaven.Ctx, name: str) -> dict[str, Any]:
        """A tool with an argument called name."""
        return {"name": name}

    return world


# --- making one ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("on_disk")
def test_an_instance_is_a_context_manager_that_destroys_itself() -> None:
    world = declare()
    with world.instance() as inst:
        assert isinstance(inst, seahaven.Instance)
        path = inst.state_path
        assert path.is_file()
        inst.call("memo", gist="x")
    assert not path.exists()
    assert not path.parent.exists()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.call("count")


@pytest.mark.usefixtures("on_disk")
def test_leaving_the_block_by_an_exception_still_destroys() -> None:
    world = declare()
    with pytest.raises(RuntimeError), world.instance() as inst:
        path = inst.state_path
        raise RuntimeError("the harness failed")
    assert not path.exists()


@pytest.mark.usefixtures("on_disk")
def test_the_members_of_a_blank_instance() -> None:
    world = declare()
    with world.instance(seed=3, clock_mode="fixed", now="2026-06-01T09:00:00Z") as inst:
        assert inst.id.startswith("inst-")
        assert inst.fixture is None
        assert isinstance(inst.seed, bytes) and len(inst.seed) == 32
        assert inst.world is world
        assert isinstance(inst.clock, seahaven.Clock)
        assert inst.clock.mode == "fixed"
        assert inst.clock.iso() == "2026-06-01T09:00:00.000Z"
        assert inst.state_path.name.endswith(".sqlite")
        assert inst.state_format == "seahaven.state/1"
        assert inst.setup_sql is None
        assert inst.control_tools is False
        assert inst.call_count == 0


def test_state_format_answers_in_another_format_for_one_instance() -> None:
    world = declare()
    with world.instance(state_format="seahaven.state+calls/1") as inst:
        assert inst.state_format == "seahaven.state+calls/1"
    assert world.pinned_state_format == "seahaven.state/1"
    with world.instance() as inst:
        assert inst.state_format == "seahaven.state/1"


def test_a_startup_hook_registered_after_an_instance_runs_for_the_next() -> None:
    # What making an instance works out from the world once is worked out again after a
    # registration: the second instance runs the hook the first did not have.
    world = declare()
    with world.instance() as inst:
        assert inst.call("count") == 0

    @world.instance_startup
    def seed_memo(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m0', 'from startup')")

    with world.instance() as inst:
        assert inst.call("count") == 1


def test_a_fixture_id_refused_once_is_refused_again() -> None:
    world = declare()
    for _ in range(2):
        with pytest.raises(seahaven.WorldBug, match="not a fixture id"):
            world.instance("../escape")


@pytest.mark.usefixtures("on_disk")
def test_two_instances_have_their_own_ids_files_and_rows() -> None:
    world = declare()
    with world.instance() as first, world.instance() as second:
        assert first.id != second.id
        assert first.state_path != second.state_path
        first.call("memo", gist="only in the first")
        assert first.call("count") == 1
        assert second.call("count") == 0


def test_tools_lists_every_tool_with_its_schema() -> None:
    world = declare()
    with world.instance() as inst:
        listed = inst.tools()
    assert [entry["name"] for entry in listed] == ["memo", "count", "rename"]
    assert listed[0] == {
        "name": "memo",
        "description": "File a memo under an id the instance mints.",
        "input_schema": world.tools["memo"].schema,
    }


def test_call_by_name_and_by_function() -> None:
    world = declare()

    @world.tool
    def echo(ctx: seahaven.Ctx, text: str, times: int = 1) -> list[str]:
        """Say it back."""
        return [text] * times

    with world.instance() as inst:
        assert inst.call("echo", text="a", times=2) == ["a", "a"]
        assert inst.call(echo, "b", times=3) == ["b", "b", "b"]
        assert inst.call(echo, text="c") == ["c"]
        assert inst.call_count == 3


def test_a_tool_argument_called_name_works() -> None:
    with declare().instance() as inst:
        assert inst.call("rename", name="ada") == {"name": "ada"}


def test_an_unknown_tool_name_is_refused() -> None:
    with declare().instance() as inst:
        with pytest.raises(seahaven.UnknownTool) as caught:
            inst.call("memos", gist="x")
        assert caught.value.details == {"name": "memos"}
        assert inst.call_count == 0


def test_a_function_that_is_not_a_tool_is_refused() -> None:
    def stray(ctx: seahaven.Ctx) -> None:
        return None

    with declare().instance() as inst, pytest.raises(seahaven.WorldBug, match="stray"):
        inst.call(stray)


def test_positional_arguments_with_a_name_are_refused() -> None:
    with declare().instance() as inst, pytest.raises(seahaven.WorldBug, match="by name"):
        inst.call("memo", "x")


def test_an_instance_is_not_made_by_hand() -> None:
    with pytest.raises(TypeError, match=r"world\.instance"):
        seahaven.Instance()


def test_setup_sql_runs_before_the_first_call_and_is_kept_as_given() -> None:
    world = declare()
    sql = "INSERT INTO memos VALUES ('m1', 'before'); INSERT INTO memos VALUES ('m2', 'also')"
    with world.instance(setup_sql=sql) as inst:
        assert inst.setup_sql == sql
        assert inst.call("count") == 2
        assert inst.change_log() == []


def test_control_tools_are_callable_only_when_asked_for_and_never_listed() -> None:
    world = declare()
    with world.instance() as inst:
        with pytest.raises(seahaven.UnknownTool):
            inst.call("controller_run_sql", query="SELECT 1")
        assert "controller_run_sql" not in [tool["name"] for tool in inst.tools()]
    with world.instance(control_tools=True) as inst:
        assert inst.control_tools is True
        assert "controller_run_sql" not in [tool["name"] for tool in inst.tools()]
        with pytest.warns(DeprecationWarning):
            answer = inst.call("controller_run_sql", query="SELECT 1 AS one")
        assert answer["rows"] == [[1]]


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"seed": -1}, "negative"),
        ({"clock_mode": "sundial"}, "not a clock mode"),
        ({"state_format": "lifecycle.none/1"}, "no state format"),
        ({"control_tools": "yes"}, "control_tools"),
        ({"setup_sql": 5}, "setup_sql"),
        ({"now": "tomorrow"}, "not an ISO-8601 instant"),
        ({"now": "2026-06-01T09:00:00"}, "no time zone"),
        ({"startup": ["x"]}, "startup must be a mapping"),
        ({"fixture": "../escape"}, "not a fixture id"),
    ],
)
def test_bad_parameters_are_refused_before_any_file_is_made(
    tmp_path: Path, options: dict[str, Any], fragment: str
) -> None:
    world = declare(work_dir=tmp_path / "work")
    with pytest.raises(seahaven.WorldBug, match=fragment):
        world.instance(**options)
    assert not (tmp_path / "work").exists() or list((tmp_path / "work").iterdir()) == []


# --- destroying one ------------------------------------------------------------------------------


@pytest.mark.usefixtures("on_disk")
def test_destroy_is_idempotent() -> None:
    inst = declare().instance()
    path = inst.state_path
    inst.destroy()
    inst.destroy()
    assert not path.exists()


@pytest.mark.parametrize(
    "use",
    [
        lambda inst: inst.call("count"),
        lambda inst: inst.tools(),
        lambda inst: inst.inspect(),
        lambda inst: inst.state(),
    ],
    ids=["call", "tools", "inspect", "state"],
)
def test_using_a_destroyed_instance_is_refused(use: Any) -> None:
    inst = declare().instance()
    inst.destroy()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        use(inst)


@pytest.mark.usefixtures("on_disk")
def test_destroy_waits_for_a_call_in_flight_to_let_go(no_gate: None) -> None:
    """destroy() keeps the instance while a call holds it, and removes it once the call ends.

    Whatever statements the call runs after it is released (its own, the change log's,
    the commit) race destroy's repeated interrupts, so the call either finishes or fails
    with the WorldBug naming the destruction: never a raw SQLite error, never half of both.
    """
    world = declare()
    entered, release, destroyed = threading.Event(), threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    @world.tool
    def slow(ctx: seahaven.Ctx) -> str:
        ctx.db.execute("INSERT INTO memos VALUES ('early', 'written before destroy began')")
        entered.set()
        assert release.wait(REACH)
        ctx.db.execute("INSERT INTO memos VALUES ('late', 'written while destroy waited')")
        return "finished"

    inst = world.instance()

    def run_call() -> None:
        try:
            outcome["result"] = inst.call("slow")
        except BaseException as error:  # reported by the assertions below, not by the thread
            outcome["raised"] = error

    def run_destroy() -> None:
        inst.destroy()
        destroyed.set()

    caller = threading.Thread(target=run_call)
    caller.start()
    assert entered.wait(REACH)
    destroyer = threading.Thread(target=run_destroy)
    destroyer.start()
    assert not destroyed.wait(SETTLE), "destroy returned while a call was still running"
    assert inst.state_path.exists()
    release.set()
    caller.join(REACH)
    destroyer.join(REACH)
    assert not caller.is_alive() and not destroyer.is_alive()
    if "raised" in outcome:
        raised = outcome["raised"]
        assert isinstance(raised, seahaven.WorldBug), repr(raised)
        assert "destroyed" in str(raised)
    else:
        assert outcome == {"result": "finished"}
    assert destroyed.is_set()
    assert not inst.state_path.exists()


def interrupt_reads(conn: Any, *, once: bool = False) -> None:
    """Stop the reads ``conn`` runs from now on (``once``: only the first).

    Once a tool has returned, the only reads left in its call are the change log's
    own: a table's layout, and the rows the tool wrote read back.
    """
    running: list[str] = [""]
    fired: list[bool] = []

    def note(cursor: Any, sql: str, bindings: Any) -> bool:
        running[0] = sql
        return True

    def stop() -> bool:
        if not running[0].startswith(("SELECT", "PRAGMA")) or (once and fired):
            return False
        fired.append(True)
        return True

    conn.exec_trace = note
    conn.set_progress_handler(stop, 1)


@pytest.mark.usefixtures("on_disk")
def test_destroy_stopping_the_change_logs_own_reads_names_the_destruction(no_gate: None) -> None:
    """A call whose tool is done when destroy() begins fails naming the destruction.

    The statements left are the change log's own (reading back what the tool wrote);
    destroy() interrupting them is the instance going away, not text the log cannot
    store, and the error says so.
    """
    world = declare()
    entered, release = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    @world.tool
    def write_then_wait(ctx: seahaven.Ctx) -> str:
        ctx.db.execute("INSERT INTO memos VALUES ('early', 'written before destroy began')")
        entered.set()
        assert release.wait(REACH)
        return "finished"

    inst = world.instance()
    conn = inst.db.conn

    def run_call() -> None:
        try:
            outcome["result"] = inst.call("write_then_wait")
        except BaseException as error:  # reported by the assertions below, not by the thread
            outcome["raised"] = error

    caller = threading.Thread(target=run_call)
    caller.start()
    assert entered.wait(REACH)
    destroyer = threading.Thread(target=inst.destroy)
    destroyer.start()
    waited = 0.0
    while not is_closing(conn) and waited < REACH:
        threading.Event().wait(0.01)
        waited += 0.01
    assert is_closing(conn)
    # destroy()'s own interrupts only stop a statement running when they land; this one
    # stops whichever the call runs next, so the change log's read-back is stopped for sure.
    interrupt_reads(conn)
    release.set()
    caller.join(REACH)
    destroyer.join(REACH)
    assert not caller.is_alive() and not destroyer.is_alive()
    raised = outcome.get("raised")
    assert isinstance(raised, seahaven.WorldBug), repr(outcome)
    assert "destroyed" in str(raised)
    assert "UTF-8" not in str(raised)
    assert not inst.state_path.exists()


def test_an_interrupt_while_the_change_log_reads_undoes_the_call_and_keeps_the_instance() -> None:
    """Interrupted while its writes were read back, a call is undone whole; the instance goes on."""
    world = declare()

    @world.tool
    def write_then_stop(ctx: seahaven.Ctx) -> str:
        ctx.db.execute("INSERT INTO memos VALUES ('kept?', 'written, then interrupted')")
        interrupt_reads(inst.db.conn, once=True)
        return "finished"

    with world.instance() as inst:
        before = inst.state()
        with pytest.raises(seahaven.WorldBug, match="interrupted while the change log read"):
            inst.call("write_then_stop")
        inst.db.conn.set_progress_handler(None)
        inst.db.conn.exec_trace = None
        assert inst.call("count") == 0
        assert inst.state()["state"] == before["state"]
        inst.call("memo", gist="after the interrupt")
        assert inst.call("count") == 1


def test_destroy_from_inside_its_own_call_is_refused() -> None:
    world = declare()
    holder: list[seahaven.Instance] = []

    @world.tool
    def self_destruct(ctx: seahaven.Ctx) -> None:
        holder[0].destroy()

    with world.instance() as inst:
        holder.append(inst)
        with pytest.raises(seahaven.WorldBug, match="inside its own call"):
            inst.call("self_destruct")
        assert inst.call("count") == 0


def test_making_an_instance_inside_a_call_is_refused() -> None:
    world = declare()

    @world.tool
    def nest(ctx: seahaven.Ctx) -> None:
        world.instance()

    with world.instance() as inst, pytest.raises(seahaven.WorldBug, match="inside a call"):
        inst.call("nest")


# --- the lock ------------------------------------------------------------------------------------


def test_calls_into_one_instance_run_one_at_a_time(no_gate: None) -> None:
    world = declare()
    first_in, release_first, second_in = threading.Event(), threading.Event(), threading.Event()

    @world.tool
    def first(ctx: seahaven.Ctx) -> None:
        first_in.set()
        assert release_first.wait(REACH)

    @world.tool
    def second(ctx: seahaven.Ctx) -> None:
        second_in.set()

    with world.instance() as inst:
        one = threading.Thread(target=inst.call, args=("first",))
        two = threading.Thread(target=inst.call, args=("second",))
        one.start()
        assert first_in.wait(REACH)
        two.start()
        assert not second_in.wait(SETTLE), "a second call entered while the first held the lock"
        release_first.set()
        assert second_in.wait(REACH)
        one.join(REACH)
        two.join(REACH)
        assert [record.tool for record in inst.call_log()] == ["first", "second"]


def test_calls_into_different_instances_never_wait_for_each_other(no_gate: None) -> None:
    world = declare()
    blocked_in, release_blocked = threading.Event(), threading.Event()

    @world.tool
    def block(ctx: seahaven.Ctx) -> None:
        blocked_in.set()
        assert release_blocked.wait(REACH)

    with world.instance() as held, world.instance() as free:
        holder = threading.Thread(target=held.call, args=("block",))
        holder.start()
        try:
            assert blocked_in.wait(REACH)
            finished = threading.Event()

            def call_the_other() -> None:
                free.call("memo", gist="not blocked")
                finished.set()

            threading.Thread(target=call_the_other).start()
            # This completes while `held` is still inside its call.
            assert finished.wait(REACH), "a call into another instance waited for the lock"
            assert not release_blocked.is_set()
        finally:
            release_blocked.set()
            holder.join(REACH)
        assert free.call("count") == 1


# --- descriptors ---------------------------------------------------------------------------------


def open_files_under(directory: Path) -> list[str]:
    """The names of the files this process holds open inside ``directory``, one per descriptor."""
    names = []
    for entry in Path("/proc/self/fd").iterdir():
        try:
            target = Path(os.readlink(entry))
        except OSError:
            continue  # closed since it was listed
        if target.parent == directory:
            names.append(target.name)
    return sorted(names)


@pytest.mark.usefixtures("on_disk")
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to list descriptors")
def test_an_instance_holds_one_descriptor_per_store_until_a_reader_opens() -> None:
    till = till_world()

    @till.instance_startup
    def float_the_till(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO receipts (id, cents) VALUES ('float', 0)")

    cafe = cafe_world(till)

    @cafe.instance_startup
    def open_the_book(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO tabs (cents) VALUES (0)")

    setup_sql = "INSERT INTO tabs (cents) VALUES (1); INSERT INTO till.receipts VALUES ('r0', 1)"
    inst = cafe.instance(setup_sql=setup_sql)
    directory = inst.directory
    try:
        # Every store was written by setup_sql and a startup hook, and a call writes both.
        inst.call("settle_tab", cents=250)
        assert inst.state()["call_count"] == 1
        assert open_files_under(directory) == ["state.sqlite", "state.till.sqlite"]
        assert sorted(path.name for path in directory.iterdir()) == [
            "state.sqlite",
            "state.till.sqlite",
        ]
        # A reader reads alongside the stores' own connections: their write-ahead logs.
        assert inst.inspect().one("SELECT count(*) AS n FROM till.receipts") == {"n": 3}
        inst.call("settle_tab", cents=100)
        assert inst.inspect().one("SELECT count(*) AS n FROM tabs") == {"n": 4}
        held = open_files_under(directory)
        assert {"state.sqlite-wal", "state.sqlite-shm", "state.till.sqlite-wal"} <= set(held)
    finally:
        inst.destroy()
    assert open_files_under(directory) == []
    assert not directory.exists()
