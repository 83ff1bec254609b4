"""``seahaven.inspect`` and ``seahaven.verifiers``: the plugins, or one line naming the fix.

The core imports neither Inspect AI nor verifiers; each is its plugin's
dependency, brought by its extra. Without the plugin, importing the path is an
``ImportError`` that names the extra's install command.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

import seahaven
import seahaven.registry.extras

PATHS = {
    "seahaven.inspect": ("seahaven_inspect", "seahaven-inspect", "inspect"),
    "seahaven.verifiers": ("seahaven_verifiers", "seahaven-verifiers", "verifiers"),
}


@pytest.mark.parametrize("alias", sorted(PATHS))
def test_the_extra_is_declared(alias: str) -> None:
    extra = seahaven.registry.extras.EXTRAS[alias]
    assert (extra.package, extra.distribution, extra.extra) == PATHS[alias]


@pytest.mark.parametrize("alias", sorted(PATHS))
def test_without_the_plugin_the_import_is_one_line_naming_the_install_command(
    alias: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    package, distribution, extra = PATHS[alias]
    monkeypatch.delitem(sys.modules, alias, raising=False)
    monkeypatch.delattr(seahaven, alias.split(".")[1], raising=False)
    monkeypatch.setitem(sys.modules, package, None)  # as if it were not installed
    with pytest.raises(ImportError) as raised:
        importlib.import_module(alias)
    message = str(raised.value)
    assert "\n" not in message
    assert f'pip install "seahaven[{extra}]"' in message
    assert distribution in message
    assert raised.value.name == alias


def test_the_core_imports_neither_framework() -> None:
    probe = (
        "import sys, seahaven, seahaven.evaluation, seahaven.scenarios, seahaven.cli; "
        "seahaven.cli.build_app(); "
        "print(sorted(m for m in ('inspect_ai', 'verifiers') if m in sys.modules))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert found.stdout.strip() == "[]"


def test_with_the_inspect_plugin_seahaven_inspect_is_its_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        importlib.import_module("seahaven_inspect")
    except ModuleNotFoundError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("seahaven-inspect is not installed; CI installs plugins/inspect")
        pytest.skip("seahaven-inspect is not installed: pip install -e plugins/inspect")
    monkeypatch.delitem(sys.modules, "seahaven.inspect", raising=False)
    module = importlib.import_module("seahaven.inspect")
    import seahaven_inspect

    assert module is seahaven_inspect
    assert module.task is seahaven_inspect.task
