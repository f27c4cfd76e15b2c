#!/bin/sh
# Regenerates the seed corpora fuzz/corpus/<target>/ from the repository's
# own files (and a few Hugging Face config.json files of tests/data,
# see fuzz/README.md), small enough to keep the whole corpus under ~1 MB.
# Run from the repository root: sh fuzz/corpus.sh
set -e
C=fuzz/corpus
HF=${HF_CONFIGS:-tests/data/hf-configs}
rm -rf $C
for t in model hf gpus topo train include serve compare trace lens calib sweep argv; do
    mkdir -p $C/$t
done

# model: every model file, and the bad ones of tests/bad
cp models/*.cfg $C/model/
cp tests/bad/model-*.cfg tests/bad/empty.cfg tests/bad/binary.cfg $C/model/

# hf: a few config.json files of different families (dense, GQA, MoE, MLA,
# ALiBi, learned positions), and the bad ones
for f in Llama-2-7b-hf Meta-Llama-3-8B Mixtral-8x7B-v0.1 DeepSeek-R1 \
         bloom opt-175b gpt-neox-20b DeepSeek-R1-Distill-Qwen-1.5B; do
    cp "$HF/$f.json" $C/hf/
done
cp tests/bad/model-*.json tests/bad/hf-*.json $C/hf/

# gpus: the catalog, each GPU alone, and the bad one
cp topologies/gpus.cfg $C/gpus/
awk '/^  \{/ && !g { g = 1; n++; out = sprintf("'$C'/gpus/gpu-%02d.cfg", n);
                    print "gpus = (" > out }
     /^  \}/ && g { sub(/,$/, ""); print > out; print ");" > out; close(out);
                    g = 0; next }
     g { print > out }' topologies/gpus.cfg
cp tests/bad/gpu-negative-bandwidth.cfg $C/gpus/

# topo: node types and clusters, and the bad ones
for f in topologies/*.cfg; do
    [ "$(basename $f)" = gpus.cfg ] || cp $f $C/topo/
done
cp tests/bad/topo-*.cfg $C/topo/

# train, serve, compare: the experiment files, with a --set line or two
for f in configs/train-*.cfg configs/search-*.cfg configs/sweep-*.cfg; do
    cp $f $C/train/
done
for f in configs/validation/*.cfg; do
    cp $f $C/train/validation-$(basename $f)
done
{ cat configs/train-llama2-7b-8xh100.cfg
  echo "#set parallel.tp=4"; echo "#set net.ib_gbps=400"
  echo "#set parallel.recompute=full"; } > $C/train/with-sets.cfg
cp tests/bad/train-input-typo.cfg $C/train/
cp configs/serve-*.cfg $C/serve/
{ cat configs/serve-llama2-70b-8xh100.cfg
  echo "#set serving.tp=8"; echo "#set workload.prompt_len=uniform:1:9"
  echo "#set slo.ttft_ms=250.5"; } > $C/serve/with-sets.cfg
cp tests/bad/serve-typo.cfg $C/serve/
cp configs/compare-*.cfg $C/compare/

# trace: the first 40 lines of each trace, and the bad ones
for f in configs/traces/*.csv; do
    head -n 40 $f > $C/trace/$(basename $f)
done
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\r\n0,10,2\r\n0.5,7,1\r\n' \
    > $C/trace/seconds-crlf.csv
cp tests/bad/trace-*.csv $C/trace/

# lens: "SPEC\nFILE" (the file an empirical spec reads)
printf '512' > $C/lens/fixed
printf 'uniform:128:1024' > $C/lens/uniform
printf 'lognormal:300:1.2' > $C/lens/lognormal
printf 'gamma' > $C/lens/arrival-gamma
printf 'offline' > $C/lens/arrival-offline
{ echo "empirical:trace.csv"; head -n 20 configs/traces/azure-llm-2023-code.csv; } \
    > $C/lens/empirical-trace
printf 'empirical:lengths.txt\n# prompt lengths\n12\n\n 300 # long\n7\n' \
    > $C/lens/empirical-list

# calib: "<digit><table>" (fuzz/fuzz_calib.c): 0 gemm (the {1, 65536}^3
# corner of each dtype's grid), 1 hbm, 2 attention, 3 launch, 4 power,
# 5 nccl-protocol (the rows the loader reads, sources shortened), 6 links,
# 7 any table, 8 topologies/pcie.tsv, 9 nccl-arch, 10 nics (byte ':'),
# 11 overhead (';'), 12 economics ('<'), 13 fit ('='),
# 14 kernels ('>')
for g in h100-sxm rtx-4090; do
    { printf 0; awk -F'\t' '/^#/ || !h { if (!/^#/) h = 1; print; next }
                            ($2 == 1 || $2 == 65536) && ($3 == 1 || $3 == 65536) &&
                            ($4 == 1 || $4 == 65536)' calib/$g/gemm.tsv; } > $C/calib/0-gemm-$g
    { printf 1; cat calib/$g/hbm.tsv; } > $C/calib/1-hbm-$g
    { printf 2; cat calib/$g/attention.tsv; } > $C/calib/2-attention-$g
    { printf 3; cat calib/$g/launch.tsv; } > $C/calib/3-launch-$g
done
for d in tests/bad/calib-*; do
    for i in 0:gemm 1:hbm; do
        { printf ${i%%:*}; cat $d/${i#*:}.tsv; } > $C/calib/${i%%:*}-${i#*:}-$(basename $d)
    done
done
{ printf 4; cat calib/power.tsv; } > $C/calib/4-power
{ printf 5; grep -v '^#' calib/nccl-protocol.tsv |
    awk -F'\t' -v OFS='\t' '$1 ~ /^(table|baseLat|hwLat|protoEfficiency|nvlsEfficiency|buffSize|perChMaxTreeBws|perChMaxRingLL128Bws|busBwFactor|NCCL_STEPS)$/ {
        sub(/@[0-9a-f]+:/, ":", $8); print $1, $2, $3, $4, $5, $6, $7, $8 }'; } > $C/calib/5-nccl-protocol
{ printf 6; cat calib/links.tsv; } > $C/calib/6-links
{ printf 7; cat calib/published.tsv; } > $C/calib/7-published
{ printf 8; cat topologies/pcie.tsv; } > $C/calib/8-pcie
{ printf 9; cat calib/nccl-arch.tsv; } > $C/calib/9-nccl-arch
{ printf :; cat calib/nics.tsv; } > $C/calib/10-nics
{ printf ';'; cat calib/overhead.tsv; } > $C/calib/11-overhead
{ printf '<'; cat calib/economics.tsv; } > $C/calib/12-economics
{ printf '='; cat calib/fit.tsv; } > $C/calib/13-fit
{ printf '>'; cat calib/kernels.tsv; } > $C/calib/14-kernels

# sweep: "<digit>..." (fuzz/fuzz_sweep.c): 0 --vary lines, 1 a file with a
# sweep group, 2 a result CSV of the fixed sweep tp 1,2,4 x nodes 1:8:*2
printf '0parallel.tp=1,2,4\nnodes=1:16:*2\nnet.ib_gbps=100:400:100\nserving.policy=fcfs,sjf' \
    > $C/sweep/0-vary
printf '0workload.rate=0.5:2:0.25\nmodel=llama-2-7b,llama-2-13b' > $C/sweep/0-vary-real
{ printf 1; cat configs/sweep-scaling-interconnect.cfg; } > $C/sweep/1-sweep-scaling
{ printf 1; cat configs/serve-llama2-70b-8xh100.cfg
  echo 'sweep = { vary = ( "serving.tp=1,2,4" ); out = "x.csv"; };'; } > $C/sweep/1-serve-group
H='point,sweep,parallel.tp,nodes,status,error,step_s,mem.peak,name'
printf '2%s\n0,0123456789abcdef,1,1,ok,,1.5,3,"x,""y"""\n5,0123456789abcdef,2,2,error,"no fit, at all",,,\n' \
    "$H" > $C/sweep/2-resume
printf '2%s\n11,0123456789abcdef,4,8,ok,,2,4,z\n3,0123456789abc' "$H" > $C/sweep/2-torn
printf '2point,sweep,parallel.tp,nodes,status,error\n' > $C/sweep/2-header-only

# include: "main.cfg\n@@@\nplan.cfg" (fuzz/fuzz_include.c)
printf 'model = "llama-2-7b";\ncluster = "dgx-h100";\n@include "plan.cfg"\n@@@\nparallel = { tp = 2; pp = 2; dp = 2; global_batch = 16; };\n' \
    > $C/include/plan
printf 'model = "llama-2-7b";\n@include "plan.cfg"\n@@@\n@include "main.cfg"\n' \
    > $C/include/cycle
printf '@include "plan.cfg"\n@@@\nparallel = { seq_len = 4294971392; };\n' \
    > $C/include/wrap
printf 'nodes = 2;\n@include "missing.cfg"\n@@@\n' > $C/include/missing
printf '@include "plan.cfg"\n@@@\nparallel = {\n  tp = 3;\n  pq = 1;\n};\n' \
    > $C/include/typo

# argv: one argument per line, the command first (fuzz/fuzz_argv.c)
n=0
while IFS= read -r line; do
    n=$((n + 1))
    printf '%s\n' $line > $C/argv/$(printf '%02d' $n)
done <<'EOF_'
train configs/train-llama2-7b-8xh100.cfg --tp 4 --set parallel.pp=2
train --model llama-2-7b --cluster dgx-h100 --microbatches 4 --global-batch 64
train configs/train-llama2-7b-8xh100.cfg --microbatches 4 --trace t.json
serve configs/serve-llama2-70b-8xh100.cfg --rate 2 --prompt-len 100 --output-len 10
serve --model llama-2-7b --cluster dgx-h100 --tp 1 --rate 1 --cv 2 --prompt-len uniform:1:9 --output-len 5
serve configs/serve-llama2-70b-disagg-2xh100.cfg --replicas 2 --csv x.csv
memory --model llama-2-7b --gpu h100-sxm --batch 8 --context 4096
memory --model llama-2-70b --train --gpu a100-sxm-80gb --tp 8 --recommend
model llama-2-7b --json --seq-len 8192
model tests/bad/model-typo-key.cfg
gpus --compare h100-sxm a100-sxm-80gb
topo dgx-h100 --nodes 4 --dot x.dot
collective --cluster dgx-h100 --op all_reduce --algo nvls -b 8 -e 1G -f 4
kernel --gpu h100-sxm --gemm 4096x4096x4096 --dtype fp8
sweep configs/sweep-scaling-interconnect.cfg --vary parallel.tp=1,2 --out x.csv -j 1
search configs/search-gpt3-175b-1024xa100.cfg --top 3
search configs/serve-llama2-70b-8xh100.cfg --gpus 8
compare configs/compare-8xa100-vs-4xh100.cfg --no-search --png x.png
calibrate --fit --out x
EOF_

du -sh $C
