#!/bin/sh
# Golden outputs of the ready experiments: text, JSON and CSV of every
# configs/*.cfg a command runs as is, plus the other commands on fixed
# inputs.  `tests/golden/run.sh DIR` writes them into DIR (one file per
# output); `make golden` regenerates tests/golden/expected/ (review the
# diff in the commit); `make test` compares a fresh run with it byte for
# byte.  LLMSIM names the binary (default ./llmsim).
set -u
L=${LLMSIM:-./llmsim}
out=${1:?usage: run.sh DIR}
mkdir -p "$out"
fail=0
# run NAME CMD...: stdout into DIR/NAME; status and stderr noted after it
run() {
    name=$1
    shift
    "$@" >"$out/$name" 2>"$out/$name.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "golden: $name: exit $rc: $(head -c 300 "$out/$name.err")" >&2
        fail=1
    fi
    # a successful run's stderr (timings, progress) is not part of it
    [ $rc -ne 0 ] || rm -f "$out/$name.err"
}
for f in configs/train-*.cfg; do
    id=$(basename "$f" .cfg)
    run "$id.txt" $L train "$f"
    run "$id.json" $L train "$f" --json
done
run train-llama2-7b-8xh100.timeline.csv sh -c "$L train configs/train-llama2-7b-8xh100.cfg --timeline $out/tl.csv >/dev/null && cat $out/tl.csv && rm -f $out/tl.csv"
for f in configs/serve-*.cfg; do
    id=$(basename "$f" .cfg)
    run "$id.txt" $L serve "$f" --requests 400
    run "$id.json" $L serve "$f" --requests 400 --json
    run "$id.csv" sh -c "$L serve $f --requests 400 --csv $out/r.csv >/dev/null && cat $out/r.csv && rm -f $out/r.csv"
done
run search-gpt3-175b-1024xa100.txt $L search configs/search-gpt3-175b-1024xa100.cfg
run search-gpt3-175b-1024xa100.json $L search configs/search-gpt3-175b-1024xa100.cfg --json
run compare-8xa100-vs-4xh100.txt $L compare configs/compare-8xa100-vs-4xh100.cfg
run compare-8xa100-vs-4xh100.json $L compare configs/compare-8xa100-vs-4xh100.cfg --json
run sweep-scaling-interconnect.csv sh -c "$L sweep configs/sweep-scaling-interconnect.cfg --no-progress -j 1 --out $out/s.csv >/dev/null && cat $out/s.csv && rm -f $out/s.csv"
run memory-llama-2-70b.txt $L memory --model llama-2-70b --gpu h100-sxm --train --tp 8 --pp 4 --dp 2 --micro-batch 1 --global-batch 64 --seq-len 4096 --recompute selective --sp
run collective-dgx-h100.csv $L collective --cluster dgx-h100 --nodes 2 --op all_reduce -b 1K -e 1G --csv
run kernel-gemm.json $L kernel --gpu h100-sxm --gemm 4096x8192x8192 --json
exit $fail
