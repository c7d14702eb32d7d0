#!/usr/bin/env bash
# Installs the Debian packages the tests need, only when one is missing.
# Usage: install-system-deps.sh PKG...
# Needs Debian's apt and root (or sudo) when something is missing; without them it
# names what to install by hand and fails (the README says how to go on).
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 && SUDO="sudo"
fi
if ! command -v apt-get >/dev/null 2>&1 || { [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; }; then
  echo "install-system-deps: cannot install ${missing[*]}: this needs Debian's apt-get and root (or sudo)." >&2
  echo "Install them (or your system's equivalents) by hand, then run: make test SYSTEM_PACKAGES=" >&2
  echo "(see 'What make test needs' in README.md)" >&2
  exit 1
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
