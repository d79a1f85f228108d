#!/usr/bin/env bash
# Builds the C# quickstart with Debian's mcs and runs it under mono against libsightline_c.
# Usage: run.sh LIB_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
mcs -warnaserror -out:"$out/sightline-quickstart.exe" "$here/Sightline.cs" "$here/Quickstart.cs"
LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" mono "$out/sightline-quickstart.exe"
