# Sourced by the scripts: make .venv with Python 3.11 and install the project, its
# plugins, its worlds and its example extensions into it, editable. Safe to run again; pip
# skips what is there. Each step says what it does on stderr, since a first install takes a
# minute or two.
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PYTHON" --version 2>&1)" >&2
  "$PYTHON" -m venv .venv
fi
# The first-party plugins and the worlds are distributions of their own; one pip run
# installs them beside the framework, so their requirement on seahaven is met here.
projects=()
own=()
for project in plugins/*/ worlds/*/ examples/*/; do
  [ -f "$project/pyproject.toml" ] || continue
  # A plugin whose dependencies cannot share this environment (verifiers pins an mcp that
  # OpenEnv and seahaven-mcp cannot take) says so, and gets an environment of its own below.
  if grep -q '^own-environment = true' "$project/pyproject.toml"; then
    own+=("${project%/}")
    continue
  fi
  # A project with a test extra (the serving plugin's browser driver) is installed with it.
  if grep -q '^test = ' "$project/pyproject.toml"; then
    projects+=(-e "${project%/}[test]")
  else
    projects+=(-e "$project")
  fi
done
echo "setup: installing seahaven and its $((${#projects[@]} / 2)) plugins, worlds and examples into" \
  ".venv, editable, with their dependencies (the first time, this downloads them: a minute or two)" >&2
setup_started=$SECONDS
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]" "${projects[@]}"
echo "setup: .venv is ready ($((SECONDS - setup_started)) s)" >&2
# Each such plugin: .venv-NAME, with the framework, the worlds and the plugin. Its tests run
# from .venv (with the scripted model server of the agents plugin, which needs another openai
# than verifiers takes) and start the plugin's commands from .venv-NAME.
for plugin in "${own[@]}"; do
  name=$(basename "$plugin")
  if [ ! -x ".venv-$name/bin/python" ]; then
    echo "setup: creating .venv-$name for $plugin, whose dependencies need an environment of their own" >&2
    "$PYTHON" -m venv ".venv-$name"
  fi
  extras=(-e .)
  for world in worlds/*/; do
    [ -f "$world/pyproject.toml" ] && extras+=(-e "${world%/}")
  done
  echo "setup: installing $plugin into .venv-$name" >&2
  ".venv-$name/bin/python" -m pip install --quiet --disable-pip-version-check "${extras[@]}" -e "$plugin"
done
unset setup_started own
