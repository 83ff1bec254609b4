"""Working directories: under the system temp directory and swept of dead processes' leftovers,
or exactly the ``work_dir`` a world names, never swept."""

import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import pytest

import seahaven
import seahaven.stores.workdir

# Every test here is about the directory and files an instance on disk keeps.
pytestmark = pytest.mark.usefixtures("on_disk")

SCHEMA = "CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;"


def declare(name: str, **options: object) -> seahaven.World:
    """A minimal world."""
    return seahaven.World(
        name=name, version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1", **options
    )


def dead_pid() -> int:
    """The pid of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_default_directory_is_under_the_system_temp_directory() -> None:
    world = declare("workdir-default")
    with world.instance() as inst:
        directory = inst.state_path.parent
        temp = Path(tempfile.gettempdir()).resolve()
        assert directory.resolve().is_relative_to(temp)
        assert world.name in directory.parts
        assert directory.is_dir()
    assert not directory.exists()


def test_a_named_work_dir_is_used_exactly_as_given_and_never_swept(tmp_path: Path) -> None:
    work = tmp_path / "runs"
    stale = work / f"{dead_pid()}-0"
    stale.mkdir(parents=True)
    (stale / "state.sqlite").write_text("left over")
    world = declare("named", work_dir=work)
    with world.instance() as inst:
        assert inst.state_path.parent.parent == work
        assert inst.state_path.parent.name == inst.id
    assert stale.is_dir(), "a named work_dir was swept"
    assert sorted(path.name for path in work.iterdir()) == [stale.name]


def test_the_first_instance_in_a_process_sweeps_dead_processes_leftovers(tmp_path: Path) -> None:
    name = f"sweep-{uuid.uuid4().hex[:8]}"
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    parent = tmp_path / f"seahaven-{uid}" / name
    dead = parent / f"{dead_pid()}-12345"
    reused = parent / f"{os.getpid()}-not-my-start-time"  # a live pid that started later
    not_ours = parent / "notes"  # not a process directory at all
    for directory in (dead, reused, not_ours):
        (directory / "inst-x").mkdir(parents=True)
        (directory / "inst-x" / "state.sqlite").write_text("left over")

    script = textwrap.dedent(
        f"""
        import seahaven

        world = seahaven.World(
            name={name!r}, version="1", schema={SCHEMA!r}, state_format="seahaven.state/1"
        )
        with world.instance() as inst:
            print(inst.state_path)
        """
    )
    environment = {**os.environ, "TMPDIR": str(tmp_path), "TEMP": str(tmp_path)}
    finished = subprocess.run(
        [sys.executable, "-c", script],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    used = Path(finished.stdout.strip())
    assert used.is_relative_to(parent)

    assert not dead.exists(), "a dead process's directory survived the sweep"
    assert not reused.exists(), "a directory of a reused pid survived the sweep"
    assert not_ours.is_dir(), "the sweep removed a directory that is not a process's"


def test_a_live_processes_directory_is_not_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"live-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    world = declare(name)
    with world.instance() as held:
        mine = held.state_path.parent
        script = textwrap.dedent(
            f"""
            import seahaven

            world = seahaven.World(
                name={name!r}, version="1", schema={SCHEMA!r}, state_format="seahaven.state/1"
            )
            with world.instance():
                pass
            """
        )
        finished = subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "TMPDIR": str(tmp_path), "TEMP": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert finished.returncode == 0, finished.stderr
        assert mine.is_dir(), "another process swept the directory of a live one"
        assert held.inspect().one("SELECT count(*) AS n FROM t") == {"n": 0}


def test_a_failed_creation_leaves_no_directory(tmp_path: Path) -> None:
    world = declare("failing", work_dir=tmp_path)

    @world.instance_startup
    def refuse(ctx: seahaven.Ctx) -> None:
        raise seahaven.WorldBug("the principal names nobody")

    with pytest.raises(seahaven.WorldBug, match="names nobody"):
        world.instance()
    assert list(tmp_path.iterdir()) == []


# --- private directories and files ---------------------------------------------------------------

RANDOM_SCHEMA = (
    "CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;"
    "CREATE TABLE salt (id INTEGER PRIMARY KEY, v INTEGER) STRICT;"
    "INSERT INTO salt (v) VALUES (random());"
)


def modes(directory: Path) -> dict[str, int]:
    """Each entry of ``directory`` and its permission bits, as ``lstat`` reports them."""
    return {entry.name: stat.S_IMODE(entry.lstat().st_mode) for entry in directory.iterdir()}


@pytest.mark.parametrize("schema", [SCHEMA, RANDOM_SCHEMA], ids=["imaged", "run-per-instance"])
def test_an_instance_keeps_its_files_from_other_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schema: str
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    world = seahaven.World(
        name="private", version="1.0.0", schema=schema, state_format="seahaven.state/1"
    )

    @world.tool
    def add(ctx: seahaven.Ctx, id: str) -> str:
        """Insert a row."""
        ctx.db.execute("INSERT INTO t (id) VALUES (?)", id)
        return id

    with world.instance(setup_sql="INSERT INTO t (id) VALUES ('s')") as inst:
        inst.call("add", id="a")
        # A reader makes SQLite open every companion file it uses.
        assert inst.inspect().one("SELECT count(*) AS n FROM t") == {"n": 2}
        files = modes(inst.directory)
        assert "state.sqlite" in files
        assert files == dict.fromkeys(files, 0o600), files
        directory = inst.directory
        while directory != tmp_path:
            assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
            directory = directory.parent


def test_a_named_work_dir_gets_private_instance_directories(tmp_path: Path) -> None:
    world = declare("named-private", work_dir=tmp_path / "runs")
    with world.instance() as inst:
        assert stat.S_IMODE(inst.directory.stat().st_mode) == 0o700
        assert modes(inst.directory) == {"state.sqlite": 0o600}


def hand_to_another_user(path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Make ``path`` belong to another uid: by ``chown`` (root only), or through the owner seam."""
    stranger = os.getuid() + 4242
    if how == "chown":
        if os.geteuid() != 0:
            pytest.skip("only root can give a directory to another user")
        os.chown(path, stranger, stranger, follow_symlinks=False)
        return
    real = seahaven.stores.workdir.owner_of
    faked = path.lstat().st_ino

    def owner(status: os.stat_result) -> int:
        return stranger if status.st_ino == faked else real(status)

    monkeypatch.setattr(seahaven.stores.workdir, "owner_of", owner)


@pytest.mark.parametrize("how", ["chown", "seam"])
@pytest.mark.parametrize("level", ["top", "world", "process"])
def test_a_default_directory_another_user_owns_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, level: str, how: str
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    name = f"owned-{uuid.uuid4().hex[:8]}"
    top = tmp_path / f"seahaven-{os.getuid()}"
    planted = {
        "top": top,
        "world": top / name,
        "process": top / name / seahaven.stores.workdir.process_mark(),
    }[level]
    planted.mkdir(parents=True, mode=0o700)
    hand_to_another_user(planted, monkeypatch, how)
    with pytest.raises(seahaven.WorldBug) as refused:
        declare(name).instance()
    message = str(refused.value)
    assert str(planted) in message
    assert "belongs to uid" in message
    assert "TMPDIR" in message
    assert list(planted.iterdir()) == []


def test_a_default_directory_others_may_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    top = tmp_path / f"seahaven-{os.getuid()}"
    top.mkdir()
    top.chmod(0o777)
    with pytest.raises(seahaven.WorldBug, match=r"may be written by other users.*chmod 700"):
        declare(f"open-{uuid.uuid4().hex[:8]}").instance()
    assert list(top.iterdir()) == []


def test_a_default_directory_that_is_a_link_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / f"seahaven-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(seahaven.WorldBug, match="is a symbolic link"):
        declare(f"linked-{uuid.uuid4().hex[:8]}").instance()
    assert list(elsewhere.iterdir()) == []


def test_an_own_directory_others_could_read_is_narrowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    top = tmp_path / f"seahaven-{os.getuid()}"
    top.mkdir()
    top.chmod(0o755)  # what releases before this one made
    with declare(f"narrowed-{uuid.uuid4().hex[:8]}").instance():
        assert stat.S_IMODE(top.stat().st_mode) == 0o700


def test_a_destroy_interrupted_while_removing_files_still_removes_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Ctrl-C (or a worker's stop) landing between two files: the rest goes too, then the
    # interrupt is raised, since a second destroy() has nothing left to do.
    host = declare("interrupted_host", work_dir=tmp_path)
    host.add_world(declare("interrupted_side"), name="side")
    inst = host.instance()
    directory = inst.directory
    assert len([path for path in directory.iterdir() if path.is_file()]) == 2
    real = os.unlink
    unlinked: list[str] = []

    def interrupted(path: object, *args: object, **kwargs: object) -> None:
        # The first file there is unlinked, then the interrupt lands.
        real(path, *args, **kwargs)  # type: ignore[arg-type]
        if not unlinked:
            unlinked.append(str(path))
            raise KeyboardInterrupt

    monkeypatch.setattr(seahaven.stores.workdir.os, "unlink", interrupted)
    with pytest.raises(KeyboardInterrupt):
        inst.destroy()
    monkeypatch.undo()
    assert len(unlinked) == 1 and not directory.exists()
    inst.destroy()  # nothing left to do


def test_a_forked_child_owns_none_of_its_parents_instances(tmp_path: Path) -> None:
    # The child destroys every instance it holds as live (as its exit would): the parent's
    # instance, inherited, is not among them, and keeps its files.
    from seahaven.instance.creation import destroy_live_instances

    inst = declare("forked_parent", work_dir=tmp_path).instance()
    child = os.fork()
    if child == 0:
        destroy_live_instances()
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert inst.directory.is_dir() and (inst.directory / "state.sqlite").exists()
    inst.destroy()
    assert not inst.directory.exists()
