#!/bin/sh
# Allocation-failure injection over whole runs (make asan): for a command,
# count the allocations llmsim's own code makes (tests/alloc/failalloc.c),
# then run it once per N with the N-th failing.  Every such run must exit
# 1 with "out of memory" on stderr, print nothing on stdout, and end
# without a sanitizer report (ASan and UBSan abort, LeakSanitizer counts a
# leak).  Prints one line per bad N and a summary; exits 1 if any.
#
#   tests/alloc/run.sh BINARY NAME -- ARGS...
# An argument @OUT@ becomes a fresh output path for each run.  JOBS
# workers in parallel (default: 2).
set -u
bin=$1 name=$2
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="exitcode=86:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=86"
# each run's arguments with @OUT@ replaced by its own output path
args() {
    for a in "$@"; do
        [ "$a" = @OUT@ ] && a="$tmp/out-$N.csv"
        printf '%s\n' "$a"
    done
}
N=0 args "$@" >"$tmp/args"
set --
while IFS= read -r a; do set -- "$@" "$a"; done <"$tmp/args"
LLMSIM_ALLOC_COUNT_FILE="$tmp/count" "$bin" "$@" >/dev/null 2>"$tmp/err0"
rc=$?
if [ $rc -ne 0 ]; then
    echo "alloc $name: the run without a failure exits $rc: $(head -c 300 "$tmp/err0")"
    exit 1
fi
total=$(cat "$tmp/count")
# one: N -> a line on stdout when that run is wrong
cat >"$tmp/one.sh" <<'ONE'
n=$1 bin=$2 tmp=$3
shift 3
for a in "$@"; do
    shift
    case "$a" in "$tmp/out-0.csv") a="$tmp/out-$n.csv" ;; esac
    set -- "$@" "$a"
done
LLMSIM_FAIL_ALLOC=$n "$bin" "$@" >"$tmp/out.$n" 2>"$tmp/err.$n"
rc=$?
why=""
if ! grep -q 'failalloc: failed allocation' "$tmp/err.$n"; then
    why="" # the run made fewer allocations this time: nothing to check
elif grep -Eq 'Sanitizer|runtime error' "$tmp/err.$n"; then
    why="sanitizer: $(grep -E 'ERROR|runtime error|SUMMARY' "$tmp/err.$n" | head -2 | tr '\n' ' ')"
elif [ $rc -ne 1 ]; then
    why="exit $rc: $(grep -v failalloc "$tmp/err.$n" | head -c 200 | tr '\n' ' ')"
elif ! grep -q 'out of memory' "$tmp/err.$n"; then
    why="no \"out of memory\": $(grep -v failalloc "$tmp/err.$n" | head -c 200 | tr '\n' ' ')"
elif [ -s "$tmp/out.$n" ]; then
    why="wrote to stdout before failing"
fi
[ -n "$why" ] && echo "  allocation $n: $why"
rm -f "$tmp/out.$n" "$tmp/err.$n" "$tmp/out-$n.csv"*
exit 0
ONE
seq 1 "$total" | xargs -P "${JOBS:-2}" -I {} sh "$tmp/one.sh" {} "$bin" "$tmp" "$@" >"$tmp/bad"
nbad=$(wc -l <"$tmp/bad")
if [ "$nbad" -gt 0 ]; then
    echo "alloc $name: $nbad of $total failed allocations handled badly:"
    head -n "${ALLOC_SHOW:-40}" "$tmp/bad"
    exit 1
fi
echo "alloc $name: $total allocations, each failing in turn: exit 1, \"out of memory\", no leak"
