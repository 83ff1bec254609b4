# Sourced by the scripts: make .venv with Python 3.11 and install the project, its
# plugins, its worlds and its example extensions into it, editable. Safe to run again: the
# install is skipped while nothing pip reads has changed since the last one (see below), and
# SEAHAVEN_REINSTALL=1 runs it anyway. Each step says what it does on stderr, since a first
# install takes a minute or two.
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
install_arguments=(-e ".[dev]" "${projects[@]}")

# The installs run with uv, which resolves and unpacks in parallel (a fresh .venv in about a
# minute, where pip takes about five: docs/decisions.md); it is put into .venv by pip first.
# SEAHAVEN_INSTALLER=pip uses pip alone, and an install uv cannot do (an index only pip's own
# configuration names, say) is done again by pip.
# venv_install PYTHON ARGS...: install ARGS into the environment of the interpreter PYTHON.
venv_install() {
  local python=$1
  shift
  if [ "${SEAHAVEN_INSTALLER:-uv}" = "uv" ]; then
    if [ ! -x .venv/bin/uv ] &&
      ! .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv>=0.5" >/dev/null 2>&1; then
      echo "setup: pip could not install uv into .venv; installing with pip instead" >&2
    fi
    if [ -x .venv/bin/uv ]; then
      if UV_PYTHON_DOWNLOADS=never .venv/bin/uv pip install --quiet --python "$python" "$@"; then
        return 0
      fi
      echo "setup: uv could not install; trying pip" >&2
    fi
  fi
  "$python" -m pip install --quiet --disable-pip-version-check "$@"
}

# What the install depends on: pip's arguments (which projects, which extras), the
# interpreter .venv was made with (pyvenv.cfg), and each project's build files. An editable
# install follows its sources by itself; what needs pip again (a dependency, an entry point,
# an extra) is written in a pyproject.toml (or setup.cfg/setup.py), so a change there changes
# this digest. The digest of the last install that succeeded is kept in .venv, so a new
# .venv always installs.
install_inputs() {
  printf '%s\n' "${install_arguments[@]}"
  printf '== pyvenv.cfg\n'
  cat .venv/pyvenv.cfg 2>/dev/null || true
  local directory file
  for directory in . plugins/*/ worlds/*/ examples/*/; do
    for file in pyproject.toml setup.cfg setup.py; do
      if [ -f "$directory/$file" ]; then
        printf '== %s\n' "${directory%/}/$file"
        cat "$directory/$file"
      fi
    done
  done
}
install_stamp=.venv/.seahaven-install
install_digest=$(install_inputs | "$PYTHON" -c \
  'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
if [ "${SEAHAVEN_REINSTALL:-0}" != "1" ] && [ -f "$install_stamp" ] &&
  [ "$(cat "$install_stamp")" = "$install_digest" ]; then
  echo "setup: .venv is up to date (no pyproject.toml has changed since its last install;" \
    "SEAHAVEN_REINSTALL=1 installs again)" >&2
else
  # Removed first, so an install that fails or is interrupted is run again next time.
  rm -f "$install_stamp"
  echo "setup: installing seahaven and its $((${#projects[@]} / 2)) plugins, worlds and examples" \
    "into .venv, editable, with their dependencies (the first time, this downloads them: about" \
    "a minute)" >&2
  setup_started=$SECONDS
  if venv_install .venv/bin/python "${install_arguments[@]}"; then
    printf '%s\n' "$install_digest" >"$install_stamp"
    echo "setup: .venv is ready ($((SECONDS - setup_started)) s)" >&2
  else
    setup_status=$?
    echo "setup: pip could not install into .venv (exit status $setup_status)" >&2
    # This file is sourced: return to the script, which stops (or says so) on the status.
    return "$setup_status" 2>/dev/null || exit "$setup_status"
  fi
  unset setup_started
fi
# Each such plugin: .venv-NAME, with the framework, the worlds and the plugin, installed when
# its environment is new or what pip reads has changed, as above. Its tests run from .venv
# (with the scripted model server of the agents plugin, which needs another openai than
# verifiers takes) and start the plugin's commands from .venv-NAME.
for plugin in "${own[@]}"; do
  name=$(basename "$plugin")
  if [ ! -x ".venv-$name/bin/python" ]; then
    echo "setup: creating .venv-$name for $plugin, whose dependencies need an environment of" \
      "their own" >&2
    "$PYTHON" -m venv ".venv-$name"
  fi
  own_arguments=(-e .)
  for world in worlds/*/; do
    [ -f "$world/pyproject.toml" ] && own_arguments+=(-e "${world%/}")
  done
  own_arguments+=(-e "$plugin")
  own_stamp=".venv-$name/.seahaven-install"
  own_digest=$({ printf '%s\n' "${own_arguments[@]}"; cat ".venv-$name/pyvenv.cfg" 2>/dev/null;
    install_inputs; } | "$PYTHON" -c \
    'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
  if [ "${SEAHAVEN_REINSTALL:-0}" != "1" ] && [ -f "$own_stamp" ] &&
    [ "$(cat "$own_stamp")" = "$own_digest" ]; then
    echo "setup: .venv-$name is up to date" >&2
    continue
  fi
  rm -f "$own_stamp"
  echo "setup: installing $plugin into .venv-$name" >&2
  if venv_install ".venv-$name/bin/python" "${own_arguments[@]}"; then
    printf '%s\n' "$own_digest" >"$own_stamp"
  else
    setup_status=$?
    echo "setup: pip could not install into .venv-$name (exit status $setup_status)" >&2
    return "$setup_status" 2>/dev/null || exit "$setup_status"
  fi
done
unset -f install_inputs venv_install
unset install_arguments install_stamp install_digest own own_arguments own_stamp own_digest
