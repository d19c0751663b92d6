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
# With ccache on the machine (Debian: apt-get install ccache), the compile goes through it: the image
# test (tests/deploy/image-build.test.ts) compiles better-sqlite3 again in a directory of its own,
# from the same sources with the same flags, and takes the objects compiled here. Paths under the
# project hash as relative ones, so another directory's compile finds them, and the locale is left
# out of the hash (the image's steps run without LANG).
if command -v ccache >/dev/null 2>&1; then
  export CC="ccache cc" CXX="ccache g++" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_SLOPPINESS=locale
fi
npm ci --no-audit --no-fund && exit 0
if [ -n "$missing" ]; then
  echo "npm ci failed, and this machine lacks$missing: better-sqlite3 could not be compiled without them" >&2
  echo "(Debian/Ubuntu: apt-get install python3 make g++; macOS: xcode-select --install), then run make again" >&2
fi
exit 1
