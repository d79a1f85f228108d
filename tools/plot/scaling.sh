#!/usr/bin/env bash
# Renders the CSV of `sightline-bench --scaling --csv CSV` as a log-log SVG of tick time against
# entity count, Sightline and brute force, and prints their least-squares slopes.
#   tools/plot/scaling.sh CSV SVG
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 CSV SVG" >&2
  exit 2
fi
command -v gnuplot > /dev/null || { echo "$0: gnuplot not found (Debian package gnuplot-nox)" >&2; exit 1; }
gnuplot -e "csv = '$1'; svg = '$2'" "$(dirname "$0")/scaling.gp"
