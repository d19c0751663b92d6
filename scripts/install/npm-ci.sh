#!/bin/sh
# `npm ci`, as `make` runs it, with the one thing Node.js alone may not be enough for said plainly:
# better-sqlite3 is a native module. npm takes its prebuilt binary when one exists for this platform
# and Node.js and can be downloaded; otherwise it compiles it, which needs python3, make and a C++
# compiler (Debian: apt-get install python3 make g++). A missing one is only a warning before the
# install, and the reason given if the install then fails.
missing=""
for tool in python3 make g++; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  echo "note: this machine lacks$missing; npm ci works only if better-sqlite3 has a prebuilt binary for it" >&2
fi
npm ci --no-audit --no-fund && exit 0
if [ -n "$missing" ]; then
  echo "npm ci failed, and this machine lacks$missing: better-sqlite3 could not be compiled without them" >&2
  echo "(Debian/Ubuntu: apt-get install python3 make g++; macOS: xcode-select --install), then run make again" >&2
fi
exit 1
