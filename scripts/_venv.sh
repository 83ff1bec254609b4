# Sourced by the scripts: make .venv with Python 3.11 and install the project
# and its worlds into it, editable. Safe to run again; pip skips what is there.
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
worlds=()
for world in worlds/*/; do
  [ -f "$world/pyproject.toml" ] && worlds+=(-e "$world")
done
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]" "${worlds[@]}"
