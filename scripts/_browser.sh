# Sourced by scripts/test: the web console's browser tests drive Debian's chromium
# (through Playwright, which never downloads a browser here). Install the package when
# it is missing: as root with apt-get, or under CI=true with sudo when that needs no
# password. Elsewhere say so; those tests then skip (under CI=true they fail instead).
# Quiet and idempotent: nothing happens when the browser is already there.
SEAHAVEN_CHROMIUM="${SEAHAVEN_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$SEAHAVEN_CHROMIUM" ]; then
  apt_runner=()
  if [ "$(id -u)" = "0" ]; then
    apt_runner=(env)
  elif [ "${CI:-}" = "true" ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt_runner=(sudo -n env)
  fi
  if [ "${#apt_runner[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "=== browser: installing Debian's chromium for the console's browser tests"
    if ! { "${apt_runner[@]}" DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
      "${apt_runner[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; then
      echo "apt-get could not install chromium; the browser tests will say what is missing" >&2
    fi
  else
    echo "=== browser: no $SEAHAVEN_CHROMIUM, and apt-get needs root: the console's browser tests" \
      "will skip (install Debian's chromium package to run them)"
  fi
fi
