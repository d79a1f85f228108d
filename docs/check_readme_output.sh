#!/usr/bin/env bash
# Every block of the README that shows what sightline-sim prints must be what it prints today.
# Such a block follows a line `<!-- output of: sightline-sim ARGS -->`; the block is compared with
# the output of `SIM ARGS` (stdout only: the progress bar goes to stderr, and only on a terminal).
#
# A line `<!-- run first: sightline-sim ARGS -->` is run before the checks, its output ignored (a
# recording a block then replays). Everything runs in a fresh temporary folder.
set -euo pipefail
root=$1
sim=$2
failed=0
checked=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
while IFS= read -r args; do
  # shellcheck disable=SC2086 # the arguments are words on purpose
  "$sim" $args > /dev/null
done < <(sed -n 's/^<!-- run first: sightline-sim *\(.*\) -->$/\1/p' "$root/README.md")
while IFS= read -r args; do
  checked=$((checked + 1))
  block=$(awk -v marker="<!-- output of: sightline-sim${args:+ $args} -->" '
    $0 == marker { found = 1; next }
    found == 1 && /^```$/ { found = 2; next }
    found == 2 && /^```$/ { exit }
    found == 2 { print }' "$root/README.md")
  # shellcheck disable=SC2086 # the arguments are words on purpose
  printed=$("$sim" $args)
  if [ "$block" != "$printed" ]; then
    echo "README.md's block for 'sightline-sim $args' differs from what it prints (< README, > binary):" >&2
    diff <(printf '%s\n' "$block") <(printf '%s\n' "$printed") >&2 || true
    failed=1
  fi
done < <(sed -n 's/^<!-- output of: sightline-sim *\(.*\) -->$/\1/p' "$root/README.md")
if [ "$checked" -eq 0 ]; then
  echo "README.md has no '<!-- output of: sightline-sim ... -->' block" >&2
  exit 1
fi
[ "$failed" -eq 0 ] || exit 1
echo "README's $checked sightline-sim blocks match what it prints"
