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
for project in plugins/*/ worlds/*/ examples/*/; do
  [ -f "$project/pyproject.toml" ] || continue
  # A project with a test extra (the serving plugin's browser driver) is installed with it.
  if grep -q '^test = ' "$project/pyproject.toml"; then
    projects+=(-e "${project%/}[test]")
  else
    projects+=(-e "$project")
  fi
done
install_arguments=(-e ".[dev]" "${projects[@]}")

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
    "into .venv, editable, with their dependencies (the first time, this downloads them: a" \
    "minute or two)" >&2
  setup_started=$SECONDS
  if .venv/bin/python -m pip install --quiet --disable-pip-version-check "${install_arguments[@]}"; then
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
unset -f install_inputs
unset install_arguments install_stamp install_digest
