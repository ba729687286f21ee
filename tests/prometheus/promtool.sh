#!/bin/sh
# Runs promtool with the given arguments for CTest; without promtool the test fails and says why
# (a missing tool must not pass as a clean check).
if ! command -v promtool >/dev/null 2>&1; then
    echo "promtool not found: install Debian's prometheus package (scripts/install-deps.sh)" >&2
    exit 1
fi
exec promtool "$@"
