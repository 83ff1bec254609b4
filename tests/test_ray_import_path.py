"""``seahaven.ray`` is the seahaven-ray plugin's package; without it, an error names the fix."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

import seahaven.registry.extras


def plugin_installed() -> bool:
    try:
        importlib.import_module("seahaven_ray")
    except ModuleNotFoundError:
        return False
    return True


def test_without_the_plugin_the_import_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "seahaven.ray", raising=False)
    monkeypatch.delattr(seahaven, "ray", raising=False)
    monkeypatch.setitem(sys.modules, "seahaven_ray", None)  # as if it were not installed
    with pytest.raises(ImportError) as raised:
        importlib.import_module("seahaven.ray")
    message = str(raised.value)
    assert 'pip install "seahaven[ray]"' in message
    assert "seahaven-ray" in message
    assert raised.value.name == "seahaven.ray"


def test_with_the_plugin_seahaven_ray_is_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    if not plugin_installed():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("seahaven-ray is not installed; CI installs plugins/ray")
        pytest.skip("seahaven-ray is not installed: pip install -e plugins/ray")
    monkeypatch.delitem(sys.modules, "seahaven.ray", raising=False)
    module = importlib.import_module("seahaven.ray")
    import seahaven_ray

    assert module is seahaven_ray
    assert module.run_episodes is seahaven_ray.run_episodes


def test_importing_seahaven_ray_does_not_import_ray() -> None:
    if not plugin_installed():
        pytest.skip("seahaven-ray is not installed")
    # A fresh interpreter: the command line loads the plugin on every run, and Ray is slow
    # to import, so only running episodes on Ray may import it.
    probe = (
        "import sys, seahaven.ray, seahaven.cli; seahaven.cli.build_app(); "
        "print('ray' in sys.modules)"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert found.stdout.strip() == "False"


def test_the_extra_is_declared() -> None:
    extra = seahaven.registry.extras.EXTRAS["seahaven.ray"]
    assert (extra.package, extra.distribution, extra.extra) == (
        "seahaven_ray",
        "seahaven-ray",
        "ray",
    )
