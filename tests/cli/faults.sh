# Fault tests (sourced by tests/cli/run.sh, with its run/has/ok/bad and
# $L, $tmp): outputs that are devices or pipes stay what they are and get
# the bytes; every write error is an error; a file-size limit never leaves
# a truncated picture; a directory is not an output; two sweeps never
# share a file.

# fifo_out NAME WANT_FILE CMD...: the command writes the output named @ to
# a FIFO a reader drains; it must exit 0, leave the FIFO a FIFO and hand
# the reader a non-empty output
fifo_out() {
    cur=$1
    shift
    rm -f "$tmp/f.fifo" "$tmp/f.got"
    mkfifo "$tmp/f.fifo"
    # (bounded: a command that fails before opening the FIFO leaves the
    # reader waiting for a writer)
    timeout 120 cat "$tmp/f.fifo" >"$tmp/f.got" &
    reader=$!
    args=$(echo "$*" | sed "s|@|$tmp/f.fifo|g")
    # shellcheck disable=SC2086
    $L $args >/dev/null 2>"$tmp/err"
    rc=$?
    wait $reader
    if [ $rc -ne 0 ]; then bad "exit $rc: $(head -c 200 "$tmp/err")"
    elif [ ! -p "$tmp/f.fifo" ]; then bad "the FIFO was replaced by a file"
    elif [ ! -s "$tmp/f.got" ]; then bad "nothing came through the FIFO"
    else ok; fi
    rm -f "$tmp/f.fifo" "$tmp/f.got"
}
fifo_out fifo-train-trace train configs/train-llama2-7b-8xh100.cfg --trace @
fifo_out fifo-train-timeline train configs/train-llama2-7b-8xh100.cfg --timeline @
fifo_out fifo-serve-csv serve configs/serve-llama2-70b-8xh100.cfg --requests 50 --csv @
fifo_out fifo-serve-trace serve configs/serve-llama2-70b-8xh100.cfg --requests 50 --chrome-trace @
fifo_out fifo-topo-dot topo dgx-h100 --dot @

# writing to a full device: every output flag, and stdout
if [ -c /dev/full ]; then
    for t in "train configs/train-llama2-7b-8xh100.cfg --trace /dev/full" \
             "train configs/train-llama2-7b-8xh100.cfg --timeline /dev/full" \
             "serve configs/serve-llama2-70b-8xh100.cfg --requests 50 --csv /dev/full" \
             "serve configs/serve-llama2-70b-8xh100.cfg --requests 50 --trace /dev/full.json" \
             "topo dgx-h100 --dot /dev/full"; do
        case "$t" in *full.json) continue ;; esac # not a device name
        # shellcheck disable=SC2086
        run 1 "full-device: $t" -- $t
        has '/dev/full: write error: No space left on device'
        if [ -c /dev/full ]; then ok; else bad "/dev/full is no longer a device"; fi
    done
    cur=stdout-full
    $L train configs/train-llama2-7b-8xh100.cfg >/dev/full 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q 'stdout: write error: No space left' "$tmp/err"; then ok
    else bad "exit $rc: $(head -c 200 "$tmp/err")"; fi
fi

# a file-size limit stops gnuplot half-way: the picture is refused, not
# left truncated, and nothing is printed
cat >"$tmp/ah2.cfg" <<EOF_
description = "Llama-2-7B training";
training = "configs/train-llama2-7b-8xh100.cfg";
clusters = ( { name = "8 x H100"; cluster = "dgx-h100"; },
             { name = "8 x A100"; cluster = "dgx-a100"; } );
search = false;
EOF_
cur=png-file-size-limit
(ulimit -f 8; $L compare "$tmp/ah2.cfg" --png "$tmp/lim.png" >"$tmp/out" 2>"$tmp/err")
rc=$?
if [ $rc -eq 1 ] && grep -q 'incomplete PNG' "$tmp/err" && [ ! -s "$tmp/out" ] &&
    [ ! -e "$tmp/lim.png" ]; then ok
else bad "exit $rc, $(head -c 200 "$tmp/err"); $(ls "$tmp"/lim.png* 2>&1)"; fi

# an output in a folder that does not exist: every output flag exits 1
# naming it (the timeline's once freed the engine twice: exit 134), and
# prints nothing
N="$tmp/no-such-dir"
for t in "train configs/train-llama2-7b-8xh100.cfg --trace $N/t.json" \
         "train configs/train-llama2-7b-8xh100.cfg --timeline $N/t.csv" \
         "serve configs/serve-llama2-70b-8xh100.cfg --requests 50 --csv $N/s.csv" \
         "serve configs/serve-llama2-70b-8xh100.cfg --requests 50 --trace $N/s.json" \
         "topo dgx-h100 --dot $N/t.dot" \
         "sweep configs/train-llama2-7b-8xh100.cfg --vary parallel.tp=1,2 --no-progress --out $N/s.csv" \
         "compare $tmp/ah2.cfg --png $N/c.png" \
         "calibrate --fit --out $N/cal"; do
    # shellcheck disable=SC2086
    run 1 "missing-folder: $t" -- $t
    has "$N/[a-z./0-9-]*: cannot create: No such file or directory"
    quiet
done

# a directory is not an input file either, in any format
mkdir -p "$tmp/d.json" "$tmp/cal/gemm.tsv"
for t in "model $tmp" "model $tmp/d.json" "topo $tmp" "compare $tmp" "sweep $tmp" \
         "train $tmp" "serve --model llama-2-7b --cluster dgx-h100 --tp 1 --trace $tmp" \
         "kernel --gpu h100-sxm --gemm 8x8x8 --calib $tmp/cal"; do
    # shellcheck disable=SC2086
    run 1 "input-directory: $t" -- $t
    has "$tmp[a-z./]*: is a directory \(expected "
    quiet
done
rm -rf "$tmp/d.json" "$tmp/cal"

# a directory is not an output file
run 1 output-directory -- train configs/train-llama2-7b-8xh100.cfg --trace "$tmp"
has "$tmp: is a directory"
quiet

# a sweep's file must be a regular file, and one sweep at a time
SWF="sweep configs/train-llama2-7b-8xh100.cfg --vary parallel.tp=1,2 --no-progress -j 1"
mkfifo "$tmp/s.fifo"
# shellcheck disable=SC2086
run 1 sweep-out-fifo -- $SWF --out "$tmp/s.fifo"
has 's.fifo: not a regular file'
if [ -p "$tmp/s.fifo" ]; then ok; else bad "the FIFO was replaced"; fi
rm -f "$tmp/s.fifo"
if command -v flock >/dev/null 2>&1; then
    : >"$tmp/locked.csv"
    flock -x "$tmp/locked.csv" sleep 3 &
    holder=$!
    sleep 0.3
    # shellcheck disable=SC2086
    run 1 sweep-locked -- $SWF --out "$tmp/locked.csv"
    has 'another sweep is writing it'
    wait $holder
fi
