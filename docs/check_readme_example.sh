#!/usr/bin/env bash
# The README's usage example must be examples/quickstart.cpp, byte for byte (that file compiles).
set -euo pipefail
root=$1
extracted=$(awk '/^\/\/ examples\/quickstart.cpp$/{on=1; next} on && /^```$/{exit} on{print}' "$root/README.md")
if [ "$extracted" != "$(cat "$root/examples/quickstart.cpp")" ]; then
  echo "README.md's example differs from examples/quickstart.cpp:" >&2
  diff <(printf '%s\n' "$extracted") "$root/examples/quickstart.cpp" >&2 || true
  exit 1
fi
echo "README example matches examples/quickstart.cpp"
