# Sourced by scripts/test: the Debian packages some tests need, installed when missing: as
# root with apt-get, or under CI=true with sudo when that needs no password. Elsewhere it says
# so; those tests then skip (under CI=true they fail instead). Quiet and idempotent: nothing
# happens when a package's program is already there.
#
# need_debian_package PROGRAM PACKAGE WHAT: install PACKAGE unless PROGRAM is there.
need_debian_package() {
  local program=$1 package=$2 what=$3
  if [ -x "$program" ] || { [ "${program#/}" = "$program" ] && command -v "$program" >/dev/null 2>&1; }; then
    return 0
  fi
  local apt_runner=()
  if [ "$(id -u)" = "0" ]; then
    apt_runner=(env)
  elif [ "${CI:-}" = "true" ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt_runner=(sudo -n env)
  fi
  if [ "${#apt_runner[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "=== packages: installing Debian's $package for $what"
    if ! { "${apt_runner[@]}" DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
      "${apt_runner[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null; }; then
      echo "apt-get could not install $package; $what will say what is missing" >&2
    fi
  else
    echo "=== packages: no $program, and apt-get needs root: $what will skip" \
      "(install Debian's $package package to run them)"
  fi
}

# The web console's browser tests drive Debian's chromium (through Playwright, which never
# downloads a browser here).
SEAHAVEN_CHROMIUM="${SEAHAVEN_CHROMIUM:-/usr/bin/chromium}"
need_debian_package "$SEAHAVEN_CHROMIUM" chromium "the console's browser tests"
# The serving benchmark's load generator (benchmarks/wsload.c), which a test builds and runs.
need_debian_package cc gcc "the native load generator's test"
