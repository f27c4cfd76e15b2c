#!/bin/sh
# Runs each fuzz target named on the command line (built by `make fuzz`
# into build-fuzz/fuzz-<target>) for $FUZZ_SECONDS over a writable copy of
# its corpus, build-fuzz/corpus/<target> (libFuzzer adds what it finds
# there, never in the git-tracked fuzz/corpus), and prints one line per
# target:
#   fuzz <target>: <execs> executions, <n> crashes
# A crash, leak, sanitizer report, timeout or out-of-memory input is left in
# build-fuzz/crashes/<target>/ and named in the message; the status is then
# 1.  The log of each run is build-fuzz/log/<target>.log.
B=build-fuzz
secs=${FUZZ_SECONDS:-30}
# a leak inside libconfig 1.5 that no caller can avoid (see the file)
export LSAN_OPTIONS="suppressions=$(pwd)/fuzz/lsan.supp:print_suppressions=0"
fail=0

max_len() {
    case $1 in
    calib) echo 65536 ;;   # a table of a few hundred rows
    gpus|train|topo|model|include) echo 32768 ;;
    argv) echo 4096 ;;
    lens|sweep|trace) echo 8192 ;;
    *) echo 16384 ;;
    esac
}

for t in "$@"; do
    bin=$B/fuzz-$t
    [ -x $bin ] || { echo "fuzz $t: $bin not built (run make fuzz)" >&2; fail=1; continue; }
    mkdir -p $B/corpus/$t $B/log
    rm -rf $B/crashes/$t
    mkdir -p $B/crashes/$t
    for d in fuzz/corpus/$t fuzz/regress/$t; do
        [ -d $d ] && find $d -type f ! -name '.*' -exec cp {} $B/corpus/$t/ \;
    done
    log=$B/log/$t.log
    # -timeout: one input may take 5 s (a parser should take milliseconds);
    # -rss_limit_mb also caps any single malloc at 2 GB
    LLMSIM_DATA=$(pwd) $bin -max_total_time=$secs -max_len=$(max_len $t) \
        -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=$B/crashes/$t/ $B/corpus/$t >$log 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' $log | tail -n 1)
    n=$(find $B/crashes/$t -type f | wc -l)
    [ $rc -ne 0 ] && [ $n -eq 0 ] && n=1 # died without an artifact
    echo "fuzz $t: ${execs:-?} executions, $n crashes"
    if [ $rc -ne 0 ] || [ $n -ne 0 ]; then
        fail=1
        for f in $(find $B/crashes/$t -type f); do
            echo "fuzz $t: crash input $f (log $log; replay: $bin $f)"
        done
        [ -z "$(find $B/crashes/$t -type f)" ] &&
            echo "fuzz $t: exited with status $rc (log $log)"
    fi
done
exit $fail
