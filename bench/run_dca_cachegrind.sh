#!/usr/bin/env bash
# Counts, rather than times, one call of dca's derivative at one thread: builds dca_calls (Release,
# via build_bench.sh) and runs it under valgrind's cachegrind with 1 and with 4 calls after a first
# one; the difference over 3 is one call's instructions, L1 data misses and last-level data misses
# (reads and writes), divided here by the bodies. The caches are simulated: L1 data 32 KiB 8-way
# (this machine's), last level $LL_BYTES (default 8 MiB, 16-way; 64-byte lines). Unlike the times
# of bench/run_dca.sh these numbers do not move with the load of a shared machine, so they show
# what a change does to the memory traffic that makes dca's time per body grow with n.
# Prints a markdown table. About 10 minutes (cachegrind runs 50-100 times slower than native).
# Usage: bench/run_dca_cachegrind.sh [case:size ...]   (default: chain 256..4096, ladder-comb 22..342)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
command -v valgrind > /dev/null || { echo "run_dca_cachegrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
build_bench dca_calls
ll="${LL_BYTES:-8388608}"
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(chain:256 chain:512 chain:1024 chain:2048 chain:4096
                                 ladder-comb:22 ladder-comb:43 ladder-comb:86 ladder-comb:171 ladder-comb:342)
count() {  # case size calls -> "instructions D1-misses LL-misses"
  valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL="$ll",16,64 --cachegrind-out-file=/dev/null \
    "$build/bench/dca_calls" "$1" "$2" "$3" 2>&1 >/dev/null | python3 -c '
import re, sys
d = {}
for line in sys.stdin:
    m = re.search(r"(I\s+refs|D1  misses|LLd misses):\s+([\d,]+)", line)
    if m: d[m.group(1).split()[0]] = int(m.group(2).replace(",", ""))
print(d["I"], d["D1"], d["LLd"])'
}
echo "One call of dca's derivative at one thread, counted by cachegrind (L1d 32 KiB, last level $((ll / 1048576)) MiB simulated), per body:"
echo
echo "| case | n (bodies) | instructions / body | L1d misses / body | last-level misses / body | last-level bytes / call (MB) |"
echo "|---|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
  name="${c%%:*}" size="${c##*:}"
  bodies=$([ "$name" = chain ] && echo "$size" || echo $((3 * size)))
  read -r i1 d1 l1 <<< "$(count "$name" "$size" 1)"
  read -r i4 d4 l4 <<< "$(count "$name" "$size" 4)"
  python3 -c "
i, d, l, n = ($i4 - $i1) / 3, ($d4 - $d1) / 3, ($l4 - $l1) / 3, $bodies
print(f'| $name | {n} | {i / n:.0f} | {d / n:.1f} | {l / n:.1f} | {l * 64 / 1e6:.3g} |')"
done
echo
echo "Command: \`${LL_BYTES:+LL_BYTES=$LL_BYTES }bench/run_dca_cachegrind.sh${*:+ $*}\`"
