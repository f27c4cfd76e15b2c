#!/bin/sh
# make validate: every published measurement in tests/validation/*.tsv,
# simulated, with its error.  Prints a table and writes
# validation-report.tsv (suite, case, metric, measured, predicted,
# error_pct, source) and docs/validation.md (tests/validate-doc.sh), then
# gates: exits 1 when accuracy is worse than tests/validation/baseline.tsv
# (tests/validate-compare.sh says what counts as worse).  Nothing is tuned
# here: a case that is far off shows as far off.
#
#   sh tests/validate.sh            the run and the gate
#   sh tests/validate.sh --update   the run, then rewrite the baseline
#                                   (make validate-baseline)
#   sh tests/validate.sh --training-only
#                                   the training suite alone into $REPORT,
#                                   no table, page or gate (ONLY=FILE: just
#                                   the case ids listed in FILE); for
#                                   calib/fit-training-load.sh
#   sh tests/validate.sh --collectives-only
#                                   the same for the collectives suite
#                                   (calib/fit-nccl-host.sh)
#   sh tests/validate.sh --serving-only
#                                   the same for the serving suite (ONLY
#                                   as for training)
# only: the one suite to run (its function's name), or empty for all
update=0 only=
case "${1-}" in
"") ;;
--update) update=1 ;;
--training-only) only=training ;;
--collectives-only) only=collectives ;;
--serving-only) only=serving ;;
*) echo "usage: validate.sh [--update | --training-only | --collectives-only | --serving-only]" >&2; exit 2 ;;
esac
base=tests/validation/baseline.tsv
doc=docs/validation.md
L=${LLMSIM:-./llmsim}
out=${REPORT:-validation-report.tsv}
tmp=$(mktemp "$out.tmp.XXXXXX") || exit 1
large=$(mktemp) || exit 1
exp=$(mktemp) || exit 1
# each training and serving case's error-model family and its ratio
# measured / predicted (of time: a rate's is predicted / measured)
fam=$(mktemp) || exit 1
kkey=$(mktemp) || exit 1
trap 'rm -f "$tmp" "$large" "$exp" "$fam" "$kkey"' EXIT
printf 'suite\tcase\tmetric\tmeasured\tpredicted\terror_pct\tsource\n' >"$tmp"

# row SUITE CASE METRIC MEASURED PREDICTED SOURCE: one report line, with
# the error in percent (nan when llmsim gave nothing)
row() {
    awk -v s="$1" -v c="$2" -v m="$3" -v a="$4" -v p="$5" -v src="$6" 'BEGIN {
        e = (p == "nan") ? "nan" : sprintf("%.1f", (p - a) / a * 100);
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s, c, m, a, p, e, src }' >>"$tmp"
}

collectives() {
    f=tests/validation/collectives.tsv
    gflag=0
    $L help collective 2>/dev/null | grep -q -- '-g N' && gflag=1
    grep -v '^#' "$f" | tail -n +2 | while IFS='	' read -r id suite cluster role gpus nodes per_node op algo size launch metric measured unit source notes; do
        [ -n "$id" ] || continue
        [ -z "${ONLY-}" ] || grep -qx "$id" "$ONLY" || continue
        set -- --cluster "$cluster" --gpus "$gpus" --op "$op" --algo "$algo" \
            -b "$size" -e "$size" --json
        # -g where the binary has it: one without still runs every case
        [ "$gflag" = 1 ] && set -- "$@" -g "$launch"
        [ "$nodes" -gt 1 ] && set -- "$@" --nodes "$nodes"
        [ "$per_node" != - ] && set -- "$@" --gpus-per-node "$per_node"
        # the bandwidth-bound end of each curve, where the issue's 10% holds
        [ "$size" -ge 268435456 ] && echo "$id" >>"$large"
        json=$($L collective "$@" 2>&1)
        # the table's rounding: time to 2 decimals (us), busbw to 2 (GB/s)
        case "$metric" in
        busbw) pred=$(echo "$json" | sed -n 's/^      "busbw_GBps": \([0-9.eE+-]*\).*/\1/p') ;;
        time_us) pred=$(echo "$json" | sed -n 's/^      "time_us": \([0-9.eE+-]*\).*/\1/p') ;;
        *) pred="" ;;
        esac
        if [ -z "$pred" ]; then
            echo "validate: $id: llmsim failed: $(echo "$json" | head -n 3)" >&2
            pred=nan
        else
            pred=$(awk -v x="$pred" 'BEGIN { printf "%.2f", x }')
        fi
        row "$suite" "$id" "$metric" "$measured" "$pred" "$source"
        key=$(echo "$json" | sed -n '/^      "band": {/,/^      }/s/^        "key": "\(.*\)".*/\1/p')
        family "$suite" "$id" "$role" "${key:-?}" "$measured" "$pred" "$([ "$metric" = time_us ] && echo time || echo rate)"
    done
}

# kernel_pred ID KEY ARGS...: KEY of `llmsim kernel ARGS --json`, or nan
# (and what llmsim said, on stderr)
kernel_pred() {
    kid=$1 key=$2
    shift 2
    json=$($L kernel "$@" --json 2>&1)
    # the error-model family, for the caller (this runs in a subshell)
    echo "$json" | sed -n '/^  "band": {/,/^  }/s/^    "key": "\(.*\)".*/\1/p' >"$kkey"
    v=$(echo "$json" | sed -n "s/^  \"$key\": \([0-9.eE+-]*\).*/\1/p")
    if [ -n "$v" ]; then echo "$v"; else
        echo "validate: $kid: llmsim failed: $json" >&2
        echo nan
    fi
}

# kernel_us ID ARGS...: `llmsim kernel ARGS`'s time in microseconds, or nan
kernel_us() {
    t=$(kernel_pred "$@")
    [ "$t" = nan ] && echo nan || awk -v t="$t" 'BEGIN { printf "%.3f", t * 1e6 }'
}

kernels() {
    f=tests/validation/kernels.tsv
    [ -f "$f" ] || return 0
    grep -v '^#' "$f" | tail -n +2 | while IFS='	' read -r id suite gpu kind dtype m n k batch heads kvh seq hd causal akern bytes metric measured unit source notes; do
        [ -n "$id" ] || continue
        case "$kind" in
        gemm)
            set -- --gemm "${m}x${n}x${k}" ;;
        attention_fwd)
            set -- --attention prefill --batch "$batch" --heads "$heads" \
                --head-dim "$hd" --seq "$seq"
            [ "$kvh" != - ] && set -- "$@" --kv-heads "$kvh"
            [ "$causal" = 1 ] && set -- "$@" --causal
            case "$akern" in
            -) ;;
            none) set -- "$@" --no-flash ;;
            *) set -- "$@" --attention-kernel "$akern" ;;
            esac ;;
        hbm_copy | hbm_read)
            # bytes moved; a copy moves 4 B per 16-bit element (read, write)
            set -- --elementwise "$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 4 }')" ;;
        hbm_triad)
            # two reads and a write: 6 B per 16-bit element
            set -- --elementwise "$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 6 }')" \
                --reads 2 --writes 1 ;;
        *) continue ;;
        esac
        # attention's rate in the benchmarks' count (the header's FLOPs, half
        # the square under the mask), whatever the kernel executes: from
        # its time
        case "$kind:$metric" in
        attention_fwd:tflops) key=time_s count=1 ;;
        *:tflops) key=tflops count= ;;
        *:GBps) key=GBps count= ;;
        *) key=time_s count= ;;
        esac
        pred=$(kernel_pred "$id" "$key" --gpu "$gpu" --dtype "$dtype" "$@")
        if [ -n "$count" ] && [ "$pred" != nan ]; then
            pred=$(awk -v t="$pred" -v b="$batch" -v h="$heads" -v s="$seq" -v d="$hd" -v c="$causal" \
                'BEGIN { printf "%.6g", 4 * b * h * s * s * d / (c == 1 ? 2 : 1) / t / 1e12 }')
        fi
        awk -v s="$suite" -v c="$id" -v m="$metric" -v a="$measured" \
            -v p="$pred" -v src="$source" 'BEGIN {
                e = (p == "nan") ? "nan" : sprintf("%.1f", (p - a) / a * 100);
                if (p != "nan") p = sprintf("%.2f", p);
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s, c, m, a, p, e, src }' >>"$tmp"
        # nothing here was fitted, except rows the notes say share a run with calibration
        case "$notes" in *"NOT independent of calibration"*) role=fit ;; *) role=check ;; esac
        family "$suite" "$id" "$role" "$(cat "$kkey")" "$measured" "$pred" \
            "$(case "$metric" in tflops | GBps) echo rate ;; *) echo time ;; esac)"
    done
}

kernel_ops() {
    f=tests/validation/kernel-ops.tsv
    grep -v '^#' "$f" | tail -n +2 | while IFS='	' read -r id suite gpu role kind tokens rowc elems reads model measured source; do
        [ -n "$id" ] || continue
        case "$kind" in
        norm) set -- --norm "${tokens}x${rowc}" ;;
        activation) set -- --elementwise "$elems" --activation --reads "$reads" --row "$rowc" ;;
        add) set -- --elementwise "$elems" --reads 2 --writes 1 ;;
        rope) set -- --rope "${tokens}x${rowc}" ;;
        *) continue ;;
        esac
        pred=$(kernel_us "$id" time_s --gpu "$gpu" --dtype fp16 "$@")
        row "$suite" "$id" time_us "$measured" "$pred" "$source"
        family "$suite" "$id" "$role" "$(cat "$kkey")" "$measured" "$pred" time
    done
}

gemm_ops() {
    f=tests/validation/gemm-ops.tsv
    grep -v '^#' "$f" | tail -n +2 | while IFS='	' read -r id suite gpu role op tokens m n k model measured source; do
        [ -n "$id" ] || continue
        pred=$(kernel_us "$id" time_s --gpu "$gpu" --dtype fp16 --gemm "${m}x${n}x${k}")
        row "$suite" "$id" time_us "$measured" "$pred" "$source"
        family "$suite" "$id" "$role" "$(cat "$kkey")" "$measured" "$pred" time
    done
}

# plan KEY: an integer of the "plan" object of the JSON in $json
plan() {
    echo "$json" | sed -n "/^  \"plan\": {/,/^  }/s/^    \"$1\": \([0-9]*\).*/\1/p"
}

training() {
    f=tests/validation/training.tsv
    [ -f "$f" ] || return 0
    # --stack NAME only where the binary has it: one without still runs every
    # case whose other flags it knows
    stackflag=0
    $L help train 2>/dev/null | grep -q -- '--stack ' && stackflag=1
    grep -v '^#' "$f" | tail -n +2 | while IFS='	' read -r id suite stack role model cluster args metric measured unit source notes; do
        [ -n "$id" ] || continue
        [ -z "${ONLY-}" ] || grep -qx "$id" "$ONLY" || continue
        set -- --model "$model" --cluster "$cluster"
        [ "$stackflag" = 1 ] && set -- "$@" --stack "$stack"
        # $args is split on blanks on purpose: it is the rest of the command line
        # shellcheck disable=SC2086
        set -- "$@" $args --json
        json=$($L train "$@" 2>&1)
        step=$(echo "$json" | sed -n 's/^  "step_time_s": \([0-9.eE+-]*\).*/\1/p')
        # the GPUs of the plan as simulated (0 when there is none)
        gpus=$(awk -v a="$(plan tp)" -v b="$(plan pp)" -v c="$(plan cp)" -v d="$(plan dp)" \
            'BEGIN { print a * b * c * d }')
        if [ -z "$step" ] || [ "$gpus" -le 0 ]; then
            echo "validate: $id: llmsim failed: $(echo "$json" | head -n 3)" >&2
            pred=nan
        elif [ "$metric" = megatron_tflops ]; then
            # SC21 eq. 3 over the simulated step; l, h, V of the model as llmsim reads it
            mj=$($L model "$model" --json 2>/dev/null)
            l=$(echo "$mj" | sed -n 's/^  "layers": \([0-9]*\).*/\1/p')
            h=$(echo "$mj" | sed -n 's/^  "hidden": \([0-9]*\).*/\1/p')
            V=$(echo "$mj" | sed -n 's/^  "vocab": \([0-9]*\).*/\1/p')
            pred=$(awk -v B="$(plan global_batch)" -v s="$(plan seq_len)" -v l="$l" \
                -v h="$h" -v V="$V" -v t="$step" -v g="$gpus" 'BEGIN {
                    F = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
                    printf "%.2f", F / t / g / 1e12 }')
        elif [ "$metric" = tokens_per_s_per_gpu ]; then
            tps=$(echo "$json" | sed -n 's/^  "tokens_per_s": \([0-9.eE+-]*\).*/\1/p')
            pred=$(awk -v x="$tps" -v g="$gpus" 'BEGIN { printf "%.1f", x / g }')
        elif [ "$metric" = model_tflops_per_gpu ]; then
            v=$(echo "$json" | sed -n 's/^  "model_tflops_per_gpu": \([0-9.eE+-]*\).*/\1/p')
            pred=$(awk -v x="$v" 'BEGIN { printf "%.1f", x }')
        else
            pred=$(awk -v t="$step" 'BEGIN { printf "%.3f", t }')
        fi
        row "$suite" "$id" "$metric" "$measured" "$pred" "$source"
        key=$(echo "$json" | sed -n '/^  "band": {/,/^  }/s/^    "key": "\(.*\)".*/\1/p')
        family "$suite" "$id" "$role" "${key:-?}" "$measured" "$pred" "$([ "$metric" = step_s ] && echo time || echo rate)"
    done
}

# family SUITE ID ROLE KEY MEASURED PREDICTED time|rate: a line of $fam
family() {
    awk -v s="$1" -v c="$2" -v r="$3" -v k="$4" -v a="$5" -v p="$6" -v kind="$7" 'BEGIN {
        if (p == "nan" || p <= 0 || a <= 0) exit
        printf "%s\t%s\t%s\t%s\t%.6g\n", s, c, r, k, kind == "time" ? a / p : p / a }' >>"$fam"
}

serving() {
    f=tests/validation/serving.tsv
    [ -f "$f" ] || return 0
    grep -v '^#' "$f" | tail -n +2 | while IFS='	' read -r id suite engine role model cluster args extra pick metric measured unit source notes; do
        [ -n "$id" ] || continue
        [ -z "${ONLY-}" ] || grep -qx "$id" "$ONLY" || continue
        # $args is split on blanks on purpose: it is the rest of the command line
        # shellcheck disable=SC2086
        set -- --model "$model" --cluster "$cluster" --engine "$engine" $args --json
        if [ "$extra" != - ]; then
            # settings with no option (quant_group) go through an experiment
            # file; the command line overrides everything else in it
            printf 'model = "%s";\ncluster = "%s";\nserving = { %s };\nworkload = { rate = 1.0; prompt_len = "1"; output_len = "1"; requests = 1; };\n' \
                "$model" "$cluster" "$extra" >"$exp"
            set -- "$exp" "$@"
        fi
        json=$($L serve "$@" 2>&1)
        # pick: a top-level key, or <ttft|tpot|itl|e2e>_<stat>[_ms], or inv_<...>
        scale=1
        p=$pick
        case "$p" in
        inv_*) scale=inv p=${p#inv_} ;;
        *_ms) scale=1000 p=${p%_ms} ;;
        esac
        case "$p" in
        ttft_* | tpot_* | itl_* | e2e_*)
            v=$(echo "$json" | sed -n "/^  \"${p%_*}_s\": {/,/^  }/s/^    \"${p##*_}\": \([0-9.eE+-]*\).*/\1/p") ;;
        *)
            v=$(echo "$json" | sed -n "s/^  \"$p\": \([0-9.eE+-]*\).*/\1/p") ;;
        esac
        if [ -z "$v" ]; then
            echo "validate: $id: llmsim failed: $(echo "$json" | head -n 3)" >&2
            pred=nan
        else
            pred=$(awk -v x="$v" -v s="$scale" 'BEGIN {
                if (s == "inv") x = x > 0 ? 1 / x : 0; else x *= s
                printf "%.2f", x }')
        fi
        row "$suite" "$id" "$metric" "$measured" "$pred" "$source"
        # the kind of figure (decide/band.h band_serve_kinds) from the metric
        case "$metric" in
        *ttft*) kind=ttft ;;
        *tpot* | *itl*) kind=tpot ;;
        e2e*) kind=e2e ;;
        *) kind=throughput ;;
        esac
        family "$suite" "$id" "$role" "serving/$kind/$engine" "$measured" "$pred" \
            "$([ "$kind" = throughput ] && echo rate || echo time)"
    done
}

if [ -n "$only" ]; then
    "$only"
    mv "$tmp" "$out"
    exit 0
fi
collectives
kernels
kernel_ops
gemm_ops
training
serving
mv "$tmp" "$out"

# table and summary
awk -F'\t' 'function median(a, k,    i, j, x, v) {
    # insertion sort (small k)
    for (i = 1; i <= k; i++) v[i] = a[i]
    for (i = 2; i <= k; i++) { x = v[i]; j = i - 1; while (j > 0 && v[j] > x) { v[j + 1] = v[j]; j-- }; v[j + 1] = x }
    return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
FILENAME == ARGV[1] { big[$1] = 1; next }
FNR > 1 {
    printf "%-12s %-6s %-8s %12s %12s %8s%%\n", $1, $2, $3, $4, $5, $6
    if ($6 == "nan") { bad++; next }
    e = $6 < 0 ? -$6 : $6
    n[$1]++; errs[$1, n[$1]] = e
    if ($2 in big) { nb++; if (e > mb) { mb = e; wb = $2 }; if (e <= 10) ok10++ }
    if (e > mx[$1]) { mx[$1] = e; worst[$1] = $2 }
    # serving mixes kinds of measurement (throughput, TTFT, TPOT): one line each
    if ($1 == "serving") {
        nm[$3]++; merrs[$3, nm[$3]] = e
        if (e > mxm[$3]) { mxm[$3] = e; worstm[$3] = $2 }
        if (e <= 25) ok25m[$3]++
    }
}
FNR == 1 { printf "%-12s %-6s %-8s %12s %12s %9s\n", "suite", "case", "metric", "measured", "predicted", "error" }
END {
    for (s in n) {
        k = n[s]
        for (i = 1; i <= k; i++) v[i] = errs[s, i]
        printf "\n%s: %d cases, median |error| %.1f%%, worst %.1f%% (%s)\n", s, k, median(v, k), mx[s], worst[s]
        if (s != "serving") continue
        for (m in nm) {
            k = nm[m]
            for (i = 1; i <= k; i++) v[i] = merrs[m, i]
            printf "  %-22s %2d cases, %2d within 25%%, median |error| %.1f%%, worst %.1f%% (%s)\n", m, k, ok25m[m], median(v, k), mxm[m], worstm[m]
        }
    }
    if (nb) printf "messages >= 256 MiB: %d cases, %d within 10%%, worst %.1f%% (%s)\n", nb, ok10, mb, wb
    if (bad) printf "%d cases could not be simulated\n", bad
}' "$large" "$out"

# training by stack and serving by engine, the fit cases apart from the
# check cases (the role rule is in the headers of the suite files)
roles=$(mktemp) || exit 1
trap 'rm -f "$tmp" "$large" "$exp" "$roles" "$fam" "$kkey"' EXIT
cat tests/validation/training.tsv tests/validation/serving.tsv >"$roles"
for s in training serving; do
    awk -F'\t' -v suite="$s" "$(cat tests/validate-stats.awk)"'
function line(name, g,    k, i, r, j, c) {
    printf "  %-14s", name
    for (i = 1; i <= 2; i++) {
        r = i == 1 ? "fit" : "check"
        k = n[g, r] + 0
        for (j = 1; j <= k; j++) v[j] = e[g, r, j]
        c = bad[g, r] ? "+" bad[g, r] " nan" : ""
        if (k) printf " %3d %-7s %6.1f%% %6.1f%% %-34s", k, c, median(v, k), mx[g, r], "(" mc[g, r] ")"
        else printf " %3d %-7s %7s %7s %-34s", 0, c, "-", "-", ""
    }
    printf "\n"
}
FILENAME == ARGV[1] { if ($0 !~ /^#/ && $1 != "id" && $1 != "") { st[$1] = $3; ro[$1] = $4 }; next }
FNR == 1 || $1 != suite { next }
{
    s = ($2 in st) ? st[$2] : "?"; r = ro[$2]
    if (!(s in seen)) { seen[s] = 1; order[++ns] = s }
    for (q = 1; q <= 2; q++) {
        g = q == 1 ? s : SUBSEP "all"
        if (!simulated($6)) { bad[g, r]++; continue }
        x = abs($6)
        e[g, r, ++n[g, r]] = x
        if (x >= mx[g, r]) { mx[g, r] = x; mc[g, r] = $2 }
    }
}
END {
    if (!ns) exit
    printf "\n%s by %s (role rule: tests/validation/%s.tsv)\n", suite, suite == "training" ? "stack" : "engine", suite
    printf "  %-14s %-47s %s\n", suite == "training" ? "stack" : "engine", "fit: cases, nan, median |error|, worst", "check: the same"
    for (i = 1; i <= ns; i++) line(order[i], order[i])
    line("all", SUBSEP "all")
}' "$roles" "$out"
done
# collectives by the issue's three message-size bands, fit apart from check
awk -F'\t' "$(cat tests/validate-stats.awk)"'
FILENAME == ARGV[1] { if ($0 !~ /^#/ && $1 != "id" && $1 != "") { ro[$1] = $4; sz[$1] = $10 }; next }
FNR == 1 || $1 != "collectives" { next }
{
    b = sz[$2] < 1048576 ? 1 : sz[$2] < 67108864 ? 2 : 3
    for (q = 1; q <= 2; q++) {
        g = q == 1 ? b SUBSEP ro[$2] : b SUBSEP "all"
        if (!simulated($6)) { bad[g]++; continue }
        e[g, ++n[g]] = abs($6)
        if (abs($6) >= mx[g]) { mx[g] = abs($6); mc[g] = $2 }
    }
}
END {
    split("< 1 MiB|1-64 MiB|>= 64 MiB", name, "|")
    printf "\ncollectives by message size (role rule: tests/validation/collectives.tsv)\n"
    printf "  %-10s %-30s %-30s %s\n", "size", "fit: cases, median, worst", "check: the same", "all: the same"
    for (b = 1; b <= 3; b++) {
        printf "  %-10s", name[b]
        split("fit check all", rs, " ")
        for (i = 1; i <= 3; i++) {
            g = b SUBSEP rs[i]; k = n[g] + 0
            for (j = 1; j <= k; j++) v[j] = e[g, j]
            if (k) printf " %3d %6.1f%% %7.1f%% %-10s", k, median(v, k), mx[g], "(" mc[g] ")"
            else printf " %3d %6s %7s %-10s", 0, "-", "-", ""
        }
        printf "\n"
    }
}' tests/validation/collectives.tsv "$out"
# per-operator kernels by GPU and by tokens, fit apart from check: SUITE FILE
# TITLE (the file's columns 3, 4 and 6 are gpu, role and tokens)
by_band() {
    awk -F'\t' -v suite="$1" -v file="$2" -v title="$3" "$(cat tests/validate-stats.awk)"'
FILENAME == ARGV[1] { if ($0 !~ /^#/ && $1 != "id" && $1 != "") { gp[$1] = $3; ro[$1] = $4; tk[$1] = $6 }; next }
FNR == 1 || $1 != suite { next }
{
    b = tk[$2] <= 64 ? 1 : tk[$2] <= 512 ? 2 : 3
    if (!(gp[$2] in seen)) { seen[gp[$2]] = 1; order[++ng] = gp[$2] }
    for (q = 1; q <= 2; q++) {
        g = gp[$2] SUBSEP ro[$2] SUBSEP (q == 1 ? b : 4)
        if (!simulated($6)) continue
        e[g, ++n[g]] = abs($6)
    }
}
END {
    if (!ng) exit
    printf "\n%s by GPU (role rule: %s): cases, median |error|\n", title, file
    printf "  %-16s %-6s %16s %16s %16s %16s\n", "gpu", "role", "1-64 tokens", "65-512", "> 512", "all"
    for (i = 1; i <= ng; i++)
        for (r = 1; r <= 2; r++) {
            rn = r == 1 ? "fit" : "check"
            if (!n[order[i], rn, 4]) continue
            printf "  %-16s %-6s", order[i], rn
            for (b = 1; b <= 4; b++) {
                g = order[i] SUBSEP rn SUBSEP b; k = n[g] + 0
                for (j = 1; j <= k; j++) v[j] = e[g, j]
                if (k) printf " %5d %9.1f%%", k, median(v, k); else printf " %16s", "-"
            }
            printf "\n"
        }
}' "$2" "$out"
}
by_band kernel-ops tests/validation/kernel-ops.tsv "memory-bound kernels"
by_band gemm-ops tests/validation/gemm-ops.tsv "GEMMs (Vidur; H200 measured here; TP1)"
# the error model: bands from the check cases, their coverage left out
bands=calib/error-bands.tsv
newbands=$(mktemp) || exit 1
cov=$(mktemp) || exit 1
trap 'rm -f "$tmp" "$large" "$exp" "$roles" "$fam" "$kkey" "$newbands" "$cov"' EXIT
awk -F'\t' -v table="$newbands" -f tests/validate-bands.awk "$fam" | tee "$cov"
echo "report: $out"
sh tests/validate-doc.sh "$out" "$doc" "$large" "$roles" || exit 2
# the page ends with how well the error bands hold (docs/error-bands.md)
{
    printf '\n## Error bands\n\nThe 80%% error band every prediction prints comes from these check cases'
    printf ' ([error bands](error-bands.md)); how often a band holds a case it was not made from:\n\n```'
    cat "$cov"
    printf '```\n'
} >>"$doc"
echo "page: $doc"
echo

if [ "$update" = 1 ]; then
    # what the new baseline changes, for the commit message; then write it
    [ -r "$base" ] && sh tests/validate-compare.sh "$base" "$out"
    sh tests/validate-compare.sh -w "$base" "$out"
    cp "$newbands" "$bands" && echo "bands: $bands written"
    exit
fi
sh tests/validate-compare.sh "$base" "$out" || exit
# the shipped error model is the one these predictions give
if ! cmp -s "$newbands" "$bands"; then
    echo "validate: $bands is stale: the bands of this model differ (sh tests/validate.sh --update rewrites it)" >&2
    diff "$bands" "$newbands" | head -20 >&2
    exit 1
fi
