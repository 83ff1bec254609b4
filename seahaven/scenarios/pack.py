"""A pack of scenarios: named, versioned, split, and loadable from YAML shipped in a package.

A ``ScenarioSet`` holds scenarios in order with named splits (``train``,
``test``, ...). A pack of hundreds of tasks is data, so it is usually a folder of
YAML files inside a world's package::

    scenarios/
      pack.yaml        name, version, description, world, defaults, splits
      invoices.yaml    a list of scenarios (or one)
      ...

``pack.yaml``'s ``defaults`` (a ``start``, a ``budget``, ``tags``) apply to every
scenario that does not say otherwise; ``splits`` maps each split to scenario
ids; ``policy_file`` names a text file in the folder holding the pack's policy
document, the rules an agent works under in every scenario (``pack.policy``).
``ScenarioSet.from_package(__package__)`` loads the folder beside a module.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import yaml

from seahaven.errors import WorldBug
from seahaven.scenarios.model import Scenario, scenario_from_data
from seahaven.stores.names import check_scenario_name

__all__ = ["PACK_FILE", "ScenarioSet"]

PACK_FILE = "pack.yaml"
_PACK_KEYS = ("name", "version", "description", "world", "policy_file", "defaults", "splits")
_DEFAULT_KEYS = ("start", "budget", "tags")


class ScenarioSet:
    """A named, versioned pack of scenarios, in order, with named splits."""

    def __init__(
        self,
        name: str,
        version: str,
        scenarios: Iterable[Scenario],
        *,
        splits: Mapping[str, Sequence[str]] | None = None,
        description: str = "",
        policy: str | None = None,
    ) -> None:
        self.name = check_scenario_name(name, what="pack name")
        if not isinstance(version, str) or not version:
            raise WorldBug(f"pack {name!r}: version is a string such as 1.0.0")
        self.version = version
        self.description = description
        if policy is not None and (not isinstance(policy, str) or not policy.strip()):
            raise WorldBug(f"pack {name!r}: policy is the text of the policy document, or None")
        # The rules an agent works under in every scenario of the pack (a support desk's
        # policy, say): shown to the agent beside each scenario's instructions.
        self.policy = policy
        # How the pack can be found again by another process: the name it is registered
        # under, or its module:attr. ``load_pack`` fills it in; ``None`` for a pack built
        # in Python, which a runner in another process must be sent whole.
        self.source: str | None = None
        # What reading the pack's files found wrong that loading it could not refuse (an
        # instruction a YAML comment cut short), by scenario id: ``scenarios check`` fails it.
        self.source_problems: dict[str, list[str]] = {}
        self._scenarios = tuple(scenarios)
        self._by_id: dict[str, Scenario] = {}
        for scenario in self._scenarios:
            if not isinstance(scenario, Scenario):
                raise WorldBug(f"pack {name!r} holds {scenario!r}, which is not a Scenario")
            if scenario.id in self._by_id:
                raise WorldBug(f"pack {name!r} has two scenarios with the id {scenario.id!r}")
            self._by_id[scenario.id] = scenario
        self._splits: dict[str, tuple[str, ...]] = {}
        for split, ids in (splits or {}).items():
            check_scenario_name(split, what=f"pack {name!r}: split name")
            if isinstance(ids, str) or not all(isinstance(item, str) for item in ids):
                raise WorldBug(f"pack {name!r}: split {split!r} is a list of scenario ids")
            unknown = [item for item in ids if item not in self._by_id]
            if unknown:
                raise WorldBug(
                    f"pack {name!r}: split {split!r} names {', '.join(map(repr, unknown))}, "
                    "which the pack does not hold"
                )
            if len(set(ids)) != len(ids):
                raise WorldBug(f"pack {name!r}: split {split!r} names a scenario twice")
            self._splits[split] = tuple(ids)

    # --- reading ----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Scenario]:
        return iter(self._scenarios)

    def __len__(self) -> int:
        return len(self._scenarios)

    def __contains__(self, scenario_id: object) -> bool:
        return scenario_id in self._by_id

    def __repr__(self) -> str:
        return f"ScenarioSet({self.name!r}, {self.version!r}, {len(self)} scenarios)"

    @property
    def scenarios(self) -> tuple[Scenario, ...]:
        """Every scenario, in the pack's order."""
        return self._scenarios

    @property
    def splits(self) -> dict[str, tuple[str, ...]]:
        """Each split's scenario ids."""
        return dict(self._splits)

    def get(self, scenario_id: str) -> Scenario:
        """The scenario with this id; a ``WorldBug`` naming the pack's ids if there is none."""
        found = self._by_id.get(scenario_id)
        if found is None:
            raise WorldBug(
                f"pack {self.name!r} has no scenario {scenario_id!r}; "
                f"`seahaven scenarios list {self.name}` lists its {len(self)}"
            )
        return found

    def split(self, name: str | None) -> list[Scenario]:
        """The scenarios of one split, in the split's order; every scenario for ``None``."""
        if name is None:
            return list(self._scenarios)
        ids = self._splits.get(name)
        if ids is None:
            known = ", ".join(self._splits) or "none"
            raise WorldBug(f"pack {self.name!r} has no split {name!r} (its splits: {known})")
        return [self._by_id[item] for item in ids]

    def split_of(self, scenario_id: str) -> list[str]:
        """The splits a scenario is in."""
        return [split for split, ids in self._splits.items() if scenario_id in ids]

    @property
    def hash(self) -> str:
        """The pack's content hash: its name, version, splits, every scenario's hash, its policy."""
        data = {
            "name": self.name,
            "version": self.version,
            "splits": {split: list(ids) for split, ids in self._splits.items()},
            "scenarios": [scenario.hash for scenario in self._scenarios],
        }
        if self.policy is not None:
            # Only when there is one, so a pack without a policy keeps the hash it had.
            data["policy_sha256"] = hashlib.sha256(self.policy.encode("utf-8")).hexdigest()
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    # --- loading ----------------------------------------------------------------------------

    @classmethod
    def from_directory(cls, directory: Path | str | Traversable) -> ScenarioSet:
        """Load a pack from a folder holding ``pack.yaml`` and scenario files (``*.yaml``)."""
        folder: Traversable = Path(directory) if isinstance(directory, str | Path) else directory
        pack_file = folder / PACK_FILE
        if not pack_file.is_file():
            raise WorldBug(
                f"{folder} has no {PACK_FILE}; a pack's folder starts with one naming the pack "
                "(name, version, splits)"
            )
        header = _read_yaml(pack_file, f"{folder}/{PACK_FILE}").data
        if not isinstance(header, Mapping):
            raise WorldBug(f"{folder}/{PACK_FILE} must be a mapping of {', '.join(_PACK_KEYS)}")
        stray = sorted(str(key) for key in header if key not in _PACK_KEYS)
        if stray:
            raise WorldBug(
                f"{folder}/{PACK_FILE} does not take {', '.join(stray)}; it takes "
                f"{', '.join(_PACK_KEYS)}"
            )
        name = header.get("name")
        version = header.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            raise WorldBug(f"{folder}/{PACK_FILE} needs a name and a version (quote the version)")
        defaults = header.get("defaults") or {}
        if not isinstance(defaults, Mapping) or not set(defaults) <= set(_DEFAULT_KEYS):
            raise WorldBug(
                f"{folder}/{PACK_FILE}: defaults is a mapping of {', '.join(_DEFAULT_KEYS)}"
            )
        scenarios: list[Scenario] = []
        problems: dict[str, list[str]] = {}
        files = sorted(
            (item for item in folder.iterdir() if item.name.endswith((".yaml", ".yml"))),
            key=lambda item: item.name,
        )
        for item in files:
            if item.name == PACK_FILE:
                continue
            where = f"{folder}/{item.name}"
            document = _read_yaml(item, where)
            content = document.data
            entries = content if isinstance(content, list) else [content]
            nodes = document.entry_nodes()
            for index, entry in enumerate(entries):
                place = f"{where}[{index}]" if isinstance(content, list) else where
                if not isinstance(entry, Mapping):
                    raise WorldBug(
                        f"{place}: a scenario is a mapping (id, instructions, grader, ...)"
                    )
                scenario = scenario_from_data(
                    _with_defaults(entry, header, defaults), _named(place, entry)
                )
                scenarios.append(scenario)
                if index < len(nodes):
                    cut = document.cut_instructions(nodes[index], where)
                    if cut is not None:
                        problems.setdefault(scenario.id, []).append(cut)
        policy = _read_policy(folder, header.get("policy_file"))
        splits = header.get("splits") or {}
        if not isinstance(splits, Mapping):
            raise WorldBug(f"{folder}/{PACK_FILE}: splits maps each split to a list of ids")
        try:
            pack = cls(
                name,
                version,
                scenarios,
                splits=splits,
                description=str(header.get("description") or ""),
                policy=policy,
            )
        except WorldBug as error:
            raise WorldBug(f"{folder}/{PACK_FILE}: {error}") from None
        pack.source_problems = problems
        return pack

    @classmethod
    def from_package(cls, package: str, directory: str = "scenarios") -> ScenarioSet:
        """Load the pack kept in ``directory`` inside an installed package (package data)."""
        try:
            root = resources.files(package)
        except (ModuleNotFoundError, TypeError) as error:
            raise WorldBug(
                f"cannot find package {package!r} to load its scenarios: {error}"
            ) from None
        return cls.from_directory(root / directory)


@dataclass(frozen=True)
class _YamlFile:
    """A YAML file read: its data, the node tree it was built from, and its lines."""

    data: Any
    node: yaml.Node | None
    lines: list[str]

    def entry_nodes(self) -> list[yaml.Node]:
        """The nodes of the file's scenarios: a list's items, or the one document."""
        if isinstance(self.node, yaml.SequenceNode):
            return list(self.node.value)
        return [self.node] if self.node is not None else []

    def cut_instructions(self, entry: yaml.Node, where: str) -> str | None:
        """What is wrong when the entry's plain ``instructions`` end where a comment starts.

        YAML ends an unquoted scalar at `` #`` and drops the rest of the line as a
        comment, so ``Refund invoice #1234`` loads as ``Refund invoice``: the
        scalar's end mark is followed, on its own line, by more text.
        """
        if not isinstance(entry, yaml.MappingNode):
            return None
        for key, value in entry.value:
            if not (isinstance(key, yaml.ScalarNode) and key.value == "instructions"):
                continue
            if not isinstance(value, yaml.ScalarNode) or value.style is not None:
                return None  # quoted or a block scalar: a # there is text
            end = value.end_mark
            rest = self.lines[end.line][end.column :] if end.line < len(self.lines) else ""
            if not _COMMENT_AFTER.match(rest):
                return None
            told = value.value if len(value.value) <= 80 else value.value[:79] + "…"
            return (
                f"{where}:{end.line + 1}: its instructions stop where an unquoted ' #' starts a "
                f"YAML comment, so the agent is told only {told!r}; quote the instructions, or "
                "move the comment to a line of its own"
            )
        return None


# What follows a plain scalar that a comment cut short: spaces, then the comment's #.
_COMMENT_AFTER = re.compile(r"[ \t]+#")
# The line breaks YAML counts lines by (its marks' line numbers are in these).
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def _read_yaml(item: Traversable, where: str) -> _YamlFile:
    try:
        text = item.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise WorldBug(f"{where} cannot be read: {error}") from None
    loader = yaml.SafeLoader(text)
    try:
        # What yaml.safe_load does, keeping the node tree: its marks say where each value was.
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as error:
        raise WorldBug(f"{where} is not valid YAML: {error}") from None
    finally:
        loader.dispose()
    return _YamlFile(data, node, _LINE_BREAK.split(text))


def _read_policy(folder: Traversable, name: Any) -> str | None:
    """The text of the file ``policy_file`` names in the pack's folder, or ``None`` for none."""
    if name is None:
        return None
    where = f"{folder}/{PACK_FILE}"
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", ".."):
        raise WorldBug(
            f"{where}: policy_file is the name of a file in the pack's folder, such as policy.md"
        )
    item = folder / name
    if not item.is_file():
        raise WorldBug(f"{where}: policy_file names {name}, which is not a file in {folder}")
    try:
        text = item.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise WorldBug(f"{folder}/{name} cannot be read as UTF-8 text: {error}") from None
    if not text.strip():
        raise WorldBug(f"{folder}/{name} is empty; a policy document says what the agent may do")
    return text


def _named(place: str, entry: Mapping[str, Any]) -> str:
    scenario_id = entry.get("id")
    return f"{place} (scenario {scenario_id!r})" if isinstance(scenario_id, str) else place


def _with_defaults(
    entry: Mapping[str, Any], header: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    data = dict(entry)
    if "world" not in data and header.get("world") is not None:
        data["world"] = header["world"]
    if "budget" not in data and "budget" in defaults:
        data["budget"] = defaults["budget"]
    if "tags" in defaults:
        data["tags"] = [
            *defaults["tags"],
            *[tag for tag in data.get("tags", ()) if tag not in defaults["tags"]],
        ]
    start_defaults = defaults.get("start")
    if isinstance(start_defaults, Mapping):
        start = data.get("start") or {}
        if isinstance(start, Mapping):
            data["start"] = {**start_defaults, **start}
    return data
