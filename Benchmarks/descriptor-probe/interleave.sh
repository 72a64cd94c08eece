#!/bin/sh
# Alternates a RunLoopKit variant of descriptor-probe with a libev variant, each run a
# fresh process, and prints each pair's ratio of handler calls per second, then the median,
# minimum and maximum ratio.
#
#     Benchmarks/descriptor-probe/interleave.sh [PAIRS] [VARIANT] [LIBEV-VARIANT] [IDLE] [SECONDS]
#
# Build first: swift build -c release --package-path Benchmarks --product descriptor-probe
set -eu
pairs=${1:-7}
variant=${2:-default}
peer=${3:-libev}
idle=${4:-8000}
seconds=${5:-3}
probe=${PROBE:-$(dirname "$0")/../.build/release/descriptor-probe}
i=0
while [ "$i" -lt "$pairs" ]; do
    ours=$("$probe" "$variant" "$idle" "$seconds" | awk '{print $3}')
    theirs=$("$probe" "$peer" "$idle" "$seconds" | awk '{print $3}')
    echo "$ours $theirs" | awk '{printf "pair %s/%s: %d / %d calls/s = %.3f\n", "'"$variant"'", "'"$peer"'", $1, $2, $1 / $2}'
    i=$((i + 1))
done | tee /dev/stderr | awk '{print $NF}' | sort -n | awk '
    { r[NR] = $1 }
    END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
          printf "median %.3f  min %.3f  max %.3f  (%d pairs)\n", m, r[1], r[NR], NR }'
