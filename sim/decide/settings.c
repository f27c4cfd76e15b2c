#include "decide/settings.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "decide/exp.h"

const char *const exp_kind_names[EXP_KINDS] = {"training", "serving",
                                               "inference", "compare"};

/* A C enum field is stored through an int (SET_ENUM, SET_DTYPE). */
_Static_assert(sizeof(plan_schedule) == sizeof(int), "enum is an int");
_Static_assert(sizeof(dtype) == sizeof(int), "enum is an int");
_Static_assert(sizeof(serve_preempt) == sizeof(int), "enum is an int");
_Static_assert(sizeof(serve_admit) == sizeof(int), "enum is an int");
_Static_assert(sizeof(plan_loss) == sizeof(int), "enum is an int");

/* ---- the table ----------------------------------------------------------- */

#define TRAIN(k, f) [EXP_TRAIN] = {k, offsetof(exp_train, f), true}
#define SERVE(k, f) [EXP_SERVE] = {k, offsetof(exp_serve, f), true}
#define INFER(k, f) [EXP_INFER] = {k, offsetof(exp_infer, f), true}
#define COMPARE(k, f) [EXP_COMPARE] = {k, offsetof(exp_compare, f), true}
#define NAMES(a) .names = a, .nnames = (int)(sizeof(a) / sizeof(a[0]))
#define INT(a, b) .type = SET_INT, .lo = a, .hi = b
#define REAL(a, b) .type = SET_DOUBLE, .lo = a, .hi = b
#define STR(n) .type = SET_STR, .size = n

static const char *const train_dtypes[] = {"bf16", "fp16", "fp8", "fp32"};
static const char *const serve_dtypes[] = {"fp16", "bf16", "fp8", "int8",
                                           "int4", "fp4"};
static const char *const serve_kv_dtypes[] = {"fp16", "bf16", "fp8"};
static const char *const infer_dtypes[] = {"fp32", "fp16", "bf16", "fp8",
                                           "int8", "int4", "fp4"};
static const char *const infer_kv_dtypes[] = {"fp32", "fp16", "bf16", "fp8",
                                              "int8"};

const setting settings_table[] = {
    /* ---- what and where ---- */
    {.flag = NULL, STR(512), .help = "what the experiment is (shown, not used)",
     .at = {TRAIN("description", description), SERVE("description", description),
            COMPARE("description", description)}},
    {.flag = "model", STR(256),
     .help = "a name from models/, a .cfg path or a Hugging Face config.json",
     .at = {TRAIN("model", model), SERVE("model", model), INFER(NULL, model)}},
    {.flag = "cluster", STR(256),
     .help = "a name from topologies/ (a node type or a cluster) or a path",
     .at = {TRAIN("cluster", cluster), SERVE("cluster", cluster)}},
    {.flag = "stack", STR(256), .dflt = "megatron-core",
     .help = "the training framework (software stack): a name from stacks/ "
             "(megatron-lm, megatron-deepspeed, megatron-core, nemo, "
             "torchtitan, fsdp1, deepspeed, llm-foundry, hf-trainer) or a .cfg "
             "path",
     .at = {TRAIN("stack", stack)}},
    {.flag = "attention-kernel", STR(16), .dflt_help = "the stack's",
     .help = "the fused attention kernel the run uses, a name from "
             "calib/attention-kernels.tsv (fa2, fa3, cudnn, fa-triton), in "
             "place of the stack's list",
     .at = {TRAIN("attention_kernel", attention_kernel)}},
    {.flag = "nodes", INT(1, 1 << 20), .dflt_help = "as the cluster file says",
     .help = "nodes of the cluster",
     .at = {TRAIN("nodes", nodes), SERVE("nodes", nodes)}},
    {.flag = "gpus", INT(1, 1 << 24), .dflt_help = "all of the cluster's",
     .help = "use the first N GPUs of the cluster",
     .at = {TRAIN("gpus", gpus), SERVE("gpus", gpus)}},
    /* ---- links: what a faster (or slower) one would buy ---- */
    {.flag = "nvlink-GBps", REAL(1e-3, 1e6), .unit = "GB/s",
     .dflt_help = "the node file's", .help = "every NVLink, per direction",
     .at = {TRAIN("net.nvlink_GBps", net.nvlink_GBps),
            SERVE("net.nvlink_GBps", net.nvlink_GBps)}},
    {.flag = "pcie-GBps", REAL(1e-3, 1e6), .unit = "GB/s",
     .dflt_help = "the node file's", .help = "every PCIe link, per direction",
     .at = {TRAIN("net.pcie_GBps", net.pcie_GBps),
            SERVE("net.pcie_GBps", net.pcie_GBps)}},
    {.flag = "ib-gbps", REAL(1e-3, 1e7), .unit = "Gb/s",
     .dflt_help = "the node file's", .help = "each NIC's line rate",
     .at = {TRAIN("net.ib_gbps", net.nic_gbps), SERVE("net.ib_gbps", net.nic_gbps)}},
    /* ---- memory overheads: stated, never hidden; -1 = calibration data ---- */
    {.flag = "cuda-context-gib", REAL(0, 1024), .scale = GiB, .unit = "GiB",
     .dflt = "-1", .dflt_help = "calib/ data for the GPU",
     .help = "CUDA context and library handles per GPU",
     .at = {TRAIN("overhead.cuda_context_gib", overhead.cuda_context_bytes),
            SERVE("overhead.cuda_context_gib", overhead.cuda_context_bytes),
            INFER(NULL, overhead.cuda_context_bytes)}},
    {.flag = "nccl-mib", REAL(0, 1e6), .scale = MiB, .unit = "MiB",
     .dflt = "-1", .dflt_help = "calib/ data for the GPU",
     .help = "NCCL buffers per communicator",
     .at = {TRAIN("overhead.nccl_mib", overhead.nccl_bytes_per_group),
            SERVE("overhead.nccl_mib", overhead.nccl_bytes_per_group),
            INFER(NULL, overhead.nccl_bytes_per_group)}},
    {.flag = "reserve-pct", REAL(0, 90), .scale = 0.01, .unit = "%",
     .dflt = "-1", .dflt_help = "calib/ data for the GPU",
     .help = "caching-allocator reserve, share of the tensors",
     /* not serving's: its KV cache is one pool allocated up front, sized
      * by gpu_memory_utilization */
     .at = {TRAIN("overhead.reserve_pct", overhead.reserve_frac),
            INFER(NULL, overhead.reserve_frac)}},
    /* ---- parallelism (training plan, serving replica, inference plan) ---- */
    {.flag = "tp", INT(1, 4096), .dflt = "1", .help = "tensor-parallel degree",
     .at = {TRAIN("parallel.tp", plan.tp), SERVE("serving.tp", tp),
            INFER(NULL, plan.tp)}},
    {.flag = "pp", INT(1, 4096), .dflt = "1", .help = "pipeline stages",
     .at = {TRAIN("parallel.pp", plan.pp), SERVE("serving.pp", pp),
            INFER(NULL, plan.pp)}},
    {.flag = "dp", INT(0, 1 << 20), .dflt = "1",
     .help = "data-parallel replicas (0: as many as the GPUs hold)",
     .at = {TRAIN("parallel.dp", plan.dp)}},
    {.flag = "cp", INT(1, 4096), .dflt = "1",
     .help = "context-parallel degree (ring attention)",
     .at = {TRAIN("parallel.cp", plan.cp)}},
    {.flag = "ep", INT(1, 4096), .dflt = "1",
     .help = "expert-parallel degree (MoE), inside dp x cp",
     .at = {TRAIN("parallel.ep", plan.ep)}},
    {.flag = "sp", .type = SET_BOOL, .flag_kind = FLAG_TRUE, .dflt = "false",
     .help = "sequence parallelism (Megatron: reduce-scatter + all-gather)",
     .at = {TRAIN("parallel.sp", plan.sp)}},
    {.flag = "vpp", INT(1, 1024), .dflt = "1",
     .help = "virtual stages per GPU (interleaved schedule)",
     .at = {TRAIN("parallel.vpp", plan.vpp)}},
    {.flag = "layers-per-stage", .type = SET_INTLIST, .lo = 0,
     .hi = MODEL_MAX_LAYERS, .size = PLAN_MAX_VSTAGES,
     .dflt_help = "even; when pp does not divide the layers but divides "
                  "layers + 2, the first and last stage a layer short",
     .help = "layers of each pipeline stage (interleaved: of each virtual "
             "stage, in model order; 0 on the first or last: the "
             "embedding or the loss alone)",
     .at = {TRAIN("parallel.layers_per_stage", plan.layers_per_stage)}},
    {.flag = "micro-batch", INT(1, 1 << 20), .dflt = "1",
     .help = "sequences per microbatch",
     .at = {TRAIN("parallel.micro_batch", plan.micro_batch)}},
    {.flag = "global-batch", INT(1, 1 << 26),
     .dflt_help = "micro-batch x dp x pp", .help = "sequences per step",
     .at = {TRAIN("parallel.global_batch", plan.global_batch)}},
    {.flag = "microbatches", INT(1, 1 << 20),
     .dflt_help = "the global batch as given",
     .help = "microbatches per step: global batch = micro-batch x dp x this",
     .at = {TRAIN("parallel.microbatches", microbatches)}},
    {.flag = "seq-len", INT(1, 1 << 24), .dflt = "2048",
     .help = "tokens per sequence",
     .at = {TRAIN("parallel.seq_len", plan.seq_len)}},
    {.flag = "schedule", .type = SET_ENUM, NAMES(plan_schedule_names),
     .dflt = "1f1b", .help = "pipeline schedule (Megatron-LM's)",
     .at = {TRAIN("parallel.schedule", plan.schedule)}},
    {.flag = "zero", INT(0, 3), .dflt = "0",
     .help = "ZeRO stage over dp x cp (3: FSDP-style)",
     .at = {TRAIN("parallel.zero", plan.zero)}},
    /* one setting for the mode and every:K's K: the field is the plan */
    {.flag = "recompute", .type = SET_RECOMPUTE, NAMES(plan_recompute_names),
     .dflt = "none",
     .help = "activation recomputation: selective replays the attention "
             "core (Megatron), op every other matmul and the cheap ops "
             "(torchtitan), every:K every K-th block in full (torchtitan), "
             "full every block",
     .at = {TRAIN("parallel.recompute", plan)}},
    {.flag = "cross-entropy", .type = SET_ENUM, NAMES(plan_loss_names),
     .dflt = "fused",
     .help = "the loss's logits buffers: fused (Megatron, in place), eager "
             "(PyTorch cross_entropy on fp32 logits: torchtitan, Hugging "
             "Face), compiled (the same under torch.compile)",
     .at = {TRAIN("parallel.cross_entropy", plan.loss)}},
    {.flag = "precision", .type = SET_DTYPE, NAMES(train_dtypes),
     .dflt = "bf16", .help = "training precision (GEMMs; fp8 needs FP8 tensor "
     "cores)", .at = {TRAIN("parallel.precision", plan.precision)}},
    {.flag = "optimizer", .type = SET_ENUM, NAMES(plan_optimizer_names),
     .dflt = "adamw",
     .help = "optimizer (sets its state's bytes and its step's traffic)",
     .at = {TRAIN("parallel.optimizer", plan.optimizer)}},
    {.flag = "no-flash-attn", .type = SET_BOOL, .flag_kind = FLAG_FALSE,
     .dflt = "true", .help = "FlashAttention (off: the s x s scores are kept)",
     .at = {TRAIN("parallel.flash_attn", plan.flash_attn),
            SERVE("serving.flash_attn", p.flash)}},
    {.flag = "no-overlap-grad-reduce", .type = SET_BOOL,
     .flag_kind = FLAG_FALSE, .dflt = "true",
     .help = "reduce gradients during the backward (off: after it)",
     .at = {TRAIN("parallel.overlap_grad_reduce", plan.overlap_grad_reduce)}},
    {.flag = "overlap-param-gather", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false",
     .help = "ZeRO: gather updated parameters during the next forward",
     .at = {TRAIN("parallel.overlap_param_gather", plan.overlap_param_gather)}},
    /* 0: the stack's (stacks/NAME.cfg ddp, model/stack.h) */
    {.flag = "bucket-mb", REAL(0, 1e6), .scale = MiB, .unit = "MiB",
     .dflt = "0",
     .help = "data-parallel gradient bucket (0: the stack's: 25 MiB as "
             "PyTorch DDP, max(40M, 1M x dp) parameters as Megatron-Core)",
     .at = {TRAIN("parallel.bucket_mb", plan.bucket_bytes)}},
    /* 0: the stack's (stacks/NAME.cfg fsdp, model/stack.h) */
    {.flag = "zero3-prefetch", REAL(0, 1e13), .dflt = "0",
     .help = "ZeRO-3 under a stack that gathers per module (DeepSpeed): "
             "parameters prefetched ahead, stage3_prefetch_bucket_size "
             "(0: the stack's)",
     .at = {TRAIN("parallel.zero3_prefetch", plan.z3_prefetch_params)}},
    {.flag = "zero3-max-live", REAL(0, 1e13), .dflt = "0",
     .help = "the same: parameters gathered at once, "
             "stage3_max_live_parameters (0: the stack's)",
     .at = {TRAIN("parallel.zero3_max_live", plan.z3_max_live_params)}},
    {.flag = "zero3-reduce-bucket", REAL(0, 1e13), .dflt = "0",
     .help = "the same: gradients reduce-scattered at once, "
             "reduce_bucket_size (0: the stack's)",
     .at = {TRAIN("parallel.zero3_reduce_bucket", plan.z3_reduce_params)}},
    {.flag = "moe-imbalance", REAL(1, 1e3), .dflt = "1",
     .help = "tokens on the busiest expert rank over the mean",
     .at = {TRAIN("parallel.moe_imbalance", plan.moe_imbalance)}},
    {.flag = "lora-rank", INT(0, 65536), .dflt = "0",
     .help = "LoRA fine-tuning at this rank (0: train every weight)",
     .at = {TRAIN("parallel.lora_rank", plan.lora_rank)}},
    {.flag = "fp8-attention", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false",
     .help = "with --precision fp8, attention in FP8 too (where the stack "
             "offers it; otherwise it stays 16-bit)",
     .at = {TRAIN("parallel.fp8_attention", plan.fp8_attention)}},
    {.flag = "compile", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false",
     .help = "torch.compile: the stack's compiled kernels (fused norms, RoPE, "
             "activations and FP8 casts) where its profile offers them",
     .at = {TRAIN("parallel.compile", plan.compile)}},
    {.flag = "tp-overlap", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false",
     .help = "overlap TP communication with the GEMMs beside it "
             "(Transformer Engine userbuffers, PyTorch AsyncTP)",
     .at = {TRAIN("parallel.tp_overlap", plan.tp_overlap)}},
    {.flag = "fsdp-fp8-allgather", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false",
     .help = "ZeRO-3/FSDP with --precision fp8: cast the weight shards to FP8 "
             "before the all-gather (torchao), which then moves 1 byte a "
             "parameter",
     .at = {TRAIN("parallel.fsdp_fp8_allgather", plan.fsdp_fp8_allgather)}},
    {.flag = "grad-fp32", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false",
     .help = "fp32 gradient accumulation (Megatron's main_grad)",
     .at = {TRAIN("parallel.grad_fp32", plan.grad_fp32)}},
    /* ---- input pipeline (training); PyTorch prefetch_factor 2, int64
     * token ids and labels ---- */
    {.flag = "loader-workers", INT(0, 4096), .dflt = "0",
     .help = "data-loader processes (0: data always ready)",
     .at = {TRAIN("input.workers", loader.workers)}},
    {.flag = "sample-ms", REAL(0, 1e7), .scale = 1e-3, .unit = "ms",
     .dflt = "0", .help = "CPU time to build one sample",
     .at = {TRAIN("input.sample_ms", loader.sample_s)}},
    {.flag = "prefetch", INT(1, 1024), .dflt = "2",
     .help = "microbatches each worker keeps ready",
     .at = {TRAIN("input.prefetch", loader.prefetch)}},
    {.flag = NULL, REAL(0, 1e6), .unit = "bytes", .dflt = "16",
     .help = "bytes copied to the GPU per token",
     .at = {TRAIN("input.bytes_per_token", loader.bytes_per_token)}},
    /* ---- serving: replicas and pools ---- */
    {.flag = "replicas", INT(1, 1 << 16),
     .dflt_help = "as many as the GPUs hold", .help = "replicas of tp x pp GPUs",
     .at = {SERVE("serving.replicas", replicas)}},
    {.flag = "prefill-replicas", INT(0, 1 << 16),
     .dflt_help = "0: prefill and decode together",
     .help = "disaggregated: prefill replicas",
     .at = {SERVE("serving.prefill_replicas", prefill_replicas)}},
    {.flag = "decode-replicas", INT(0, 1 << 16),
     .dflt_help = "0: prefill and decode together",
     .help = "disaggregated: decode replicas",
     .at = {SERVE("serving.decode_replicas", decode_replicas)}},
    {.flag = "prefill-tp", INT(1, 4096), .dflt_help = "serving.tp",
     .help = "disaggregated: a prefill replica's TP",
     .at = {SERVE("serving.prefill_tp", prefill_tp)}},
    {.flag = "prefill-pp", INT(1, 4096), .dflt_help = "serving.pp",
     .help = "disaggregated: a prefill replica's PP",
     .at = {SERVE("serving.prefill_pp", prefill_pp)}},
    {.flag = "decode-tp", INT(1, 4096), .dflt_help = "serving.tp",
     .help = "disaggregated: a decode replica's TP",
     .at = {SERVE("serving.decode_tp", decode_tp)}},
    {.flag = "decode-pp", INT(1, 4096), .dflt_help = "serving.pp",
     .help = "disaggregated: a decode replica's PP",
     .at = {SERVE("serving.decode_pp", decode_pp)}},
    {.flag = "kv-layerwise", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false", .help = "disaggregated: send the KV cache layer by layer",
     .at = {SERVE("serving.kv_layerwise", p.kv_layerwise)}},
    /* ---- serving: the engine.  A setting not given takes the engine
     * profile's (stacks/NAME.cfg kind "serving", serve/eprof.h); the
     * values here are vLLM V1's, which the profile-less defaults keep
     * (max_num_seqs 256, block_size 16, gpu_memory_utilization 0.9,
     * swap_space 4 GiB, chunked prefill with an 8192-token budget) ---- */
    {.flag = "engine", STR(256), .dflt = "vllm-v1",
     .help = "the serving engine: a profile from stacks/ "
             "(vllm-v0, vllm-v0-eager, vllm-v1, vllm-v1-eager, sglang, "
             "sglang-0.3, "
             "trtllm-0.7, trtllm-0.x, trtllm-1.x, hf-generate, gpt-fast) "
             "or a .cfg path",
     .at = {SERVE("engine", engine)}},
    {.flag = "max-num-seqs", INT(1, 1 << 20), .dflt = "256",
     .dflt_help = "the engine's (vLLM: 256)",
     .help = "sequences in one iteration",
     .at = {SERVE("serving.max_num_seqs", p.max_num_seqs)}},
    {.flag = "scheduler-steps", INT(1, 1024), .dflt = "1",
     .dflt_help = "the engine's (1: schedule every iteration)",
     .help = "decode iterations run per scheduling decision (vLLM "
             "--num-scheduler-steps: new requests wait for the run's end)",
     .at = {SERVE("serving.scheduler_steps", p.scheduler_steps)}},
    {.flag = "max-batched-tokens", INT(1, 1 << 22), .dflt = "8192",
     .dflt_help = "the engine's (vLLM V1: 8192)",
     .help = "tokens in one forward pass",
     .at = {SERVE("serving.max_batched_tokens", p.max_batched_tokens),
            INFER(NULL, plan.max_batched_tokens)}},
    {.flag = "chunk", INT(0, 1 << 22), .dflt = "0",
     .dflt_help = "the engine's (vLLM: 0)",
     .help = "chunked policy: tokens per iteration; prefill-first: tokens "
             "per prefill batch, longer prompts split (0: max-batched-tokens, "
             "and prefill-first takes whole prompts only)",
     .at = {SERVE("serving.chunk", p.chunk)}},
    {.flag = "policy", .type = SET_ENUM, NAMES(serve_policy_names),
     .dflt = "chunked",
     .dflt_help = "the engine's (vLLM V1: chunked, TensorRT-LLM: inflight)",
     .help = "scheduler policy (inflight: decodes and whole prompts, never "
             "split, as TensorRT-LLM without chunked context)",
     .at = {SERVE("serving.policy", p.policy)}},
    {.flag = "router", .type = SET_ENUM, NAMES(serve_router_names),
     .dflt = "least-outstanding", .help = "how requests go to replicas",
     .at = {SERVE("serving.router", p.router)}},
    {.flag = "block-size", INT(1, 65536), .dflt = "16",
     .dflt_help = "the engine's (vLLM: 16)",
     .help = "tokens per paged KV block",
     .at = {SERVE("serving.block_size", p.block_size),
            INFER(NULL, plan.block_size)}},
    {.flag = "gpu-mem-util", REAL(0.01, 1), .dflt = "0.9",
     .dflt_help = "the engine's (vLLM: 0.9)",
     .help = "share of GPU memory the engine takes (KV cache included)",
     .at = {SERVE("serving.gpu_memory_utilization", p.gpu_mem_util)}},
    {.flag = "preemption", .type = SET_ENUM, NAMES(serve_preempt_names),
     .dflt = "recompute", .dflt_help = "the engine's (vLLM: recompute)",
     .help = "what a preempted request loses",
     .at = {SERVE("serving.preemption", p.preempt)}},
    {.flag = "admission", .type = SET_ENUM, NAMES(serve_admit_names),
     .dflt = "chunk", .dflt_help = "the engine's (vLLM V1: chunk)",
     .help = "KV blocks free before a waiting request joins: its next "
             "chunk's, its whole prompt's, its prompt and output's "
             "(no-evict), or its prompt and a share of its output's "
             "(reserve)",
     .at = {SERVE("serving.admission", p.admit)}},
    {.flag = "swap-space-gib", REAL(0, 1 << 20), .scale = GiB, .unit = "GiB",
     .dflt = "4", .help = "host memory per GPU for swapped KV blocks",
     .at = {SERVE("serving.swap_space_gib", p.swap_space_bytes)}},
    {.flag = "dtype", .type = SET_DTYPE, NAMES(serve_dtypes),
     .dflt_help = "the model's 16-bit dtype",
     .help = "weights (int8/int4: weight-only, 16-bit GEMMs; fp4: NVFP4 "
             "weights and GEMMs, Blackwell)",
     .at = {SERVE("serving.dtype", p.weight_dt)}},
    {.flag = "kv-dtype", .type = SET_DTYPE, NAMES(serve_kv_dtypes),
     .dflt_help = "16-bit; FP8 with FP8 weights where the engine does so "
                  "(TensorRT-LLM)",
     .help = "KV cache precision",
     .at = {SERVE("serving.kv_dtype", p.kv_dt)}},
    {.flag = "quant-group", INT(1, 1 << 20), .dflt = "128",
     .help = "int4 group size",
     .at = {SERVE("serving.quant_group", p.quant_group),
            INFER(NULL, plan.quant_group)}},
    {.flag = "iteration-overhead-ms", REAL(0, 1e6), .scale = 1e-3,
     .unit = "ms", .dflt = "0", .dflt_help = "the engine's (vLLM V1: 2 ms)",
     .help = "fixed host time per iteration (scheduling, sampling)",
     .at = {SERVE("serving.iteration_overhead_ms", p.iteration_overhead_s)}},
    /* ---- serving: the workload ---- */
    {.flag = "trace", STR(1024), .dflt_help = "none: a synthetic workload",
     .help = "a request trace (Azure format: TIMESTAMP,ContextTokens,"
             "GeneratedTokens)",
     .at = {SERVE("workload.trace", trace)}},
    {.flag = "rate-scale", REAL(1e-9, 1e9), .dflt = "1",
     .help = "the trace's arrival rate x this",
     .at = {SERVE("workload.rate_scale", rate_scale)}},
    {.flag = "requests", INT(1, 1 << 30),
     .dflt_help = "1000 drawn, or the whole trace",
     .help = "requests drawn (or the trace's first N)",
     .at = {SERVE("workload.requests", requests)}},
    {.flag = "arrival", .type = SET_ENUM, NAMES(wl_arrival_names),
     .dflt = "poisson", .help = "arrival process",
     .at = {SERVE("workload.arrival", arrival)}},
    {.flag = "rate", REAL(1e-9, 1e9), .unit = "requests/s",
     .dflt_help = "none (needed unless offline)", .help = "mean arrival rate",
     .at = {SERVE("workload.rate", rate)}},
    {.flag = "cv", REAL(1e-6, 1e6), .dflt = "1",
     .help = "gamma: coefficient of variation of the gaps",
     .at = {SERVE("workload.cv", cv)}},
    {.flag = "burst", INT(1, 1 << 30), .dflt = "1",
     .help = "burst: requests arriving together",
     .at = {SERVE("workload.burst", burst)}},
    {.flag = "concurrency", INT(0, 1 << 24), .dflt = "0",
     .dflt_help = "0: open loop, requests arrive as --arrival draws them",
     .help = "closed loop: this many clients, each sending its next "
             "request when its last one finishes (genai-perf, vLLM's "
             "--max-concurrency)",
     .at = {SERVE("workload.concurrency", concurrency)}},
    {.flag = "warmup", INT(0, 1 << 30), .dflt = "0",
     .help = "requests sent first that run but stay out of every latency "
             "figure: a benchmark's warm-up (genai-perf and AIPerf "
             "--warmup-request-count), or a closed loop's first wave, which "
             "a tool measuring stable windows never reports; throughputs "
             "are over the other requests' window, counting all it "
             "delivered",
     .at = {SERVE("workload.warmup", warmup)}},
    {.flag = "think-time-ms", REAL(0, 1e9), .scale = 1e-3, .unit = "ms",
     .dflt = "0", .help = "closed loop: a client's pause between a "
                          "request's last token and its next request",
     .at = {SERVE("workload.think_time_ms", think_s)}},
    {.flag = "max-model-len", INT(0, 1 << 26), .dflt = "0",
     .dflt_help = "0: the model's max_seq",
     .help = "the longest request, prompt + output, the engine is built "
             "for (TensorRT-LLM's max_seq_len, vLLM's max_model_len)",
     .at = {SERVE("serving.max_model_len", max_model_len)}},
    {.flag = "allow-truncate", .type = SET_BOOL, .flag_kind = FLAG_TRUE,
     .dflt = "false",
     .help = "cut requests longer than the model's context to fit it and "
             "count them (without: an error naming the first)",
     .at = {SERVE("workload.allow_truncate", allow_truncate)}},
    {.flag = "prompt-len", STR(1100), .dflt_help = "none",
     .help = "prompt tokens: N, uniform:LO:HI, lognormal:MEAN:SIGMA or "
             "empirical:FILE", .at = {SERVE("workload.prompt_len", prompt_len)}},
    {.flag = "output-len", STR(1100), .dflt_help = "none",
     .help = "output tokens, as --prompt-len",
     .at = {SERVE("workload.output_len", output_len)}},
    {.flag = "seed", .type = SET_LONG, .lo = 0, .hi = 4294967295.0,
     .dflt = "1", .help = "the random draws' seed",
     .at = {SERVE("workload.seed", seed)}},
    {.flag = "slo-ttft", REAL(0, 1e9), .scale = 1e-3, .unit = "ms",
     .dflt = "0", .dflt_help = "0: none", .help = "time-to-first-token objective",
     .at = {SERVE("slo.ttft_ms", p.slo_ttft_s)}},
    {.flag = "slo-tpot", REAL(0, 1e9), .scale = 1e-3, .unit = "ms",
     .dflt = "0", .dflt_help = "0: none", .help = "time-per-output-token objective",
     .at = {SERVE("slo.tpot_ms", p.slo_tpot_s)}},
    /* ---- the memory command's inference plan ---- */
    {.flag = "batch", INT(1, 1 << 26), .dflt = "1",
     .help = "concurrent sequences", .at = {INFER(NULL, plan.batch)}},
    {.flag = "context", INT(1, 1 << 26), .dflt_help = "the model's max_seq",
     .help = "tokens per sequence, prompt + output",
     .at = {INFER(NULL, plan.context)}},
    {.flag = "dtype", .type = SET_DTYPE, NAMES(infer_dtypes),
     .dflt_help = "the model's", .help = "weights",
     .at = {INFER(NULL, plan.weight_dtype)}},
    {.flag = "kv-dtype", .type = SET_DTYPE, NAMES(infer_kv_dtypes),
     .dflt_help = "the weights' 16-bit dtype", .help = "KV cache precision",
     .at = {INFER(NULL, plan.kv_dtype)}},
    /* ---- a compare file ---- */
    {.flag = NULL, STR(1024), .dflt_help = "none",
     .help = "the training experiment file to compare",
     .at = {COMPARE("training", training)}},
    {.flag = NULL, STR(1024), .dflt_help = "none",
     .help = "the serving experiment file to compare",
     .at = {COMPARE("serving", serving)}},
    {.flag = NULL, REAL(1, 1e18), .dflt = "1e9", .unit = "tokens",
     .help = "the time and cost of training this many tokens",
     .at = {COMPARE("train_tokens", train_tokens)}},
    {.flag = "no-search", .type = SET_BOOL, .flag_kind = FLAG_FALSE,
     .dflt = "true",
     .help = "each cluster's best plan and deployment (off: the files' own)",
     .at = {COMPARE("search", search)}},
    /* economics: -1 = calib/economics.tsv's figure, with its source */
    {.flag = NULL, REAL(0.01, 100), .unit = "years", .dflt = "-1",
     .dflt_help = "calib/economics.tsv",
     .help = "purchase price spread over this many years",
     .at = {COMPARE("economics.amortization_years", econ.amortization_years)}},
    {.flag = NULL, REAL(0, 100), .unit = "$/kWh", .dflt = "-1",
     .dflt_help = "calib/economics.tsv",
     .help = "electricity price",
     .at = {COMPARE("economics.usd_per_kwh", econ.usd_per_kwh)}},
    {.flag = NULL, REAL(1, 10), .dflt = "-1",
     .dflt_help = "calib/economics.tsv",
     .help = "facility power over IT power",
     .at = {COMPARE("economics.pue", econ.pue)}},
    {.flag = NULL, REAL(0, 1e6), .unit = "$/kW-month", .dflt = "-1",
     .dflt_help = "calib/economics.tsv",
     .help = "hosting (space, cooling, power delivery) per kW of IT load",
     .at = {COMPARE("economics.hosting_usd_per_kw_month",
                    econ.hosting_usd_per_kw_month)}},
    {.flag = NULL, .type = SET_ENUM, NAMES(econ_mode_names), .dflt = "own",
     .help = "own (buy, power and host the cluster) or rent (a cloud's "
             "price per GPU-hour)",
     .at = {COMPARE("economics.mode", econ.mode)}},
    /* per node type and GPU: -1 = the data's figure for each cluster */
    {.flag = NULL, REAL(0, 1e9), .unit = "$", .dflt = "-1",
     .dflt_help = "calib/node-economics.tsv",
     .help = "the server beyond its GPUs (CPUs, memory, NICs, chassis), per GPU",
     .at = {COMPARE("economics.server_usd_per_gpu", econ.server_usd_per_gpu)}},
    {.flag = NULL, REAL(0, 1e9), .unit = "$", .dflt = "-1",
     .dflt_help = "calib/node-economics.tsv",
     .help = "the cluster network (switches, cables, optics), per GPU",
     .at = {COMPARE("economics.network_usd_per_gpu", econ.network_usd_per_gpu)}},
    {.flag = NULL, REAL(0, 1e5), .unit = "W", .dflt = "-1",
     .dflt_help = "calib/node-economics.tsv",
     .help = "node power beyond the GPUs while working, per GPU",
     .at = {COMPARE("economics.host_w_per_gpu", econ.host_w_per_gpu)}},
    {.flag = NULL, REAL(0, 1e5), .unit = "W", .dflt = "-1",
     .dflt_help = "calib/node-economics.tsv",
     .help = "network switch power, per GPU",
     .at = {COMPARE("economics.network_w_per_gpu", econ.network_w_per_gpu)}},
    {.flag = NULL, REAL(0, 1e4), .unit = "$/GPU-hour", .dflt = "-1",
     .dflt_help = "calib/cloud-prices.tsv",
     .help = "rent: a cloud's price per GPU-hour",
     .at = {COMPARE("economics.rent_usd_per_gpu_hour",
                    econ.rent_usd_per_gpu_hour)}},
};

const int settings_count = (int)(sizeof settings_table / sizeof *settings_table);

const setting_conflict settings_conflicts[] = {
    {EXP_TRAIN, "global-batch", "microbatches",
     "the global batch is then micro-batch x dp x microbatches"},
    {EXP_SERVE, "trace", "rate",
     "a trace's arrivals are its timestamps; --rate-scale scales them"},
    {EXP_SERVE, "trace", "arrival", "a trace's arrivals are its timestamps"},
    {EXP_SERVE, "trace", "prompt-len", "a trace gives each prompt's length"},
    {EXP_SERVE, "trace", "output-len", "a trace gives each output's length"},
    {EXP_SERVE, "concurrency", "rate",
     "a closed loop's clients send a request when their last one ends"},
    {EXP_SERVE, "concurrency", "arrival",
     "a closed loop's clients send a request when their last one ends"},
    {EXP_SERVE, "replicas", "prefill-replicas",
     "a disaggregated deployment is its prefill and decode replicas"},
    {EXP_SERVE, "replicas", "decode-replicas",
     "a disaggregated deployment is its prefill and decode replicas"},
};
const int settings_nconflicts =
    (int)(sizeof settings_conflicts / sizeof *settings_conflicts);
_Static_assert(sizeof settings_table / sizeof *settings_table <= SETTINGS_MAX,
               "raise SETTINGS_MAX");

/* ---- lookup ---------------------------------------------------------------- */

const setting *settings_by_flag(exp_kind k, const char *flag)
{
    for (int i = 0; i < settings_count; i++) {
        const setting *s = &settings_table[i];
        if (s->at[k].in && s->flag && strcmp(s->flag, flag) == 0)
            return s;
    }
    return NULL;
}

const setting *settings_by_key(exp_kind k, const char *key)
{
    for (int i = 0; i < settings_count; i++) {
        const setting *s = &settings_table[i];
        if (s->at[k].in && s->at[k].key && strcmp(s->at[k].key, key) == 0)
            return s;
    }
    return NULL;
}

int settings_index(const setting *s) { return (int)(s - settings_table); }

int settings_keys(exp_kind k, const char **keys, int cap)
{
    int n = 0;
    for (int i = 0; i < settings_count && n < cap; i++)
        if (settings_table[i].at[k].in && settings_table[i].at[k].key)
            keys[n++] = settings_table[i].at[k].key;
    return n;
}

bool settings_has_group(exp_kind k, const char *group)
{
    size_t n = strlen(group);
    for (int i = 0; i < settings_count; i++) {
        const char *key = settings_table[i].at[k].in ? settings_table[i].at[k].key
                                                     : NULL;
        if (key && strncmp(key, group, n) == 0 && key[n] == '.')
            return true;
    }
    return false;
}

/* ---- storing ----------------------------------------------------------------- */

static void *field(const setting *s, exp_kind k, void *x)
{
    return (char *)x + s->at[k].off;
}

static double scale_of(const setting *s) { return s->scale > 0 ? s->scale : 1; }

void settings_expect(const setting *s, char *buf, size_t len)
{
    switch (s->type) {
    case SET_INT:
    case SET_LONG:
        snprintf(buf, len, "an integer %.0f..%.0f", s->lo, s->hi);
        return;
    case SET_DOUBLE:
        snprintf(buf, len, "a number %g..%g%s%s", s->lo, s->hi,
                 s->unit && s->unit[0] ? ", in " : "", s->unit ? s->unit : "");
        return;
    case SET_BOOL:
        snprintf(buf, len, "true or false");
        return;
    case SET_STR:
        snprintf(buf, len, "a quoted string");
        return;
    case SET_INTLIST:
        snprintf(buf, len, "a list of at most %zu integers %.0f..%.0f, as "
                 "[7, 8, 8, 7] in a file or 7,8,8,7 on the command line",
                 s->size, s->lo, s->hi);
        return;
    case SET_RECOMPUTE:
        snprintf(buf, len, "one of none|selective|op|full, or every:K with K "
                 "an integer from 1 to the layers");
        return;
    case SET_ENUM:
    case SET_DTYPE: {
        size_t n = (size_t)snprintf(buf, len, "one of ");
        for (int i = 0; i < s->nnames && n < len; i++)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "",
                                  s->names[i]);
        return;
    }
    }
}

static int fail(const setting *s, char *why, size_t len, const char *fmt,
                const char *what)
{
    char expect[200];
    settings_expect(s, expect, sizeof expect);
    char head[400];
    snprintf(head, sizeof head, fmt, what);
    snprintf(why, len, "%s (expected %s)", head, expect);
    return -1;
}

int settings_put_ints(const setting *s, exp_kind k, void *x,
                      const long long *v, int n, char *why, size_t len)
{
    if (s->type != SET_INTLIST)
        return fail(s, why, len, "%s", "wrong type");
    if (n < 1 || (size_t)n > s->size) {
        char num[48];
        snprintf(num, sizeof num, "%d entries", n);
        return fail(s, why, len, "%s", num);
    }
    for (int i = 0; i < n; i++)
        if ((double)v[i] < s->lo || (double)v[i] > s->hi) {
            char num[64];
            snprintf(num, sizeof num, "entry %d, %lld, is out of range",
                     i + 1, v[i]);
            return fail(s, why, len, "%s", num);
        }
    plan_int_list *f = field(s, k, x);
    f->n = n;
    for (int i = 0; i < n; i++)
        f->v[i] = (int)v[i];
    return 0;
}

/* "7,8,8,7" or "[7, 8, 8, 7]" */
static int parse_ints(const setting *s, exp_kind k, void *x, const char *text,
                      char *why, size_t len)
{
    static long long v[PLAN_MAX_VSTAGES + 1];
    int n = 0;
    const char *p = text;
    while (*p == ' ' || *p == '[')
        p++;
    while (*p && *p != ']') {
        char *end;
        errno = 0;
        long long x1 = strtoll(p, &end, 10);
        if (errno || end == p)
            return fail(s, why, len, "\"%.60s\" is not a list of integers",
                        text);
        if (n <= PLAN_MAX_VSTAGES)
            v[n] = x1;
        n++;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p && *p != ']')
            return fail(s, why, len, "\"%.60s\" is not a list of integers",
                        text);
        while (*p == ' ')
            p++;
    }
    if (*p == ']' && p[1])
        return fail(s, why, len, "\"%.60s\" is not a list of integers",
                    text);
    return settings_put_ints(s, k, x, v, n > PLAN_MAX_VSTAGES + 1 ? PLAN_MAX_VSTAGES + 1 : n,
                             why, len);
}

int settings_put_int(const setting *s, exp_kind k, void *x, long long v,
                     char *why, size_t len)
{
    if (s->type == SET_DOUBLE)
        return settings_put_real(s, k, x, (double)v, why, len);
    if (s->type == SET_INTLIST) /* a list of one */
        return settings_put_ints(s, k, x, &v, 1, why, len);
    if (s->type != SET_INT && s->type != SET_LONG)
        return fail(s, why, len, "%s", "wrong type");
    if ((double)v < s->lo || (double)v > s->hi) {
        char num[32];
        snprintf(num, sizeof num, "%lld", v);
        return fail(s, why, len, "%s is out of range", num);
    }
    if (s->type == SET_INT)
        *(int *)field(s, k, x) = (int)v;
    else
        *(long *)field(s, k, x) = (long)v;
    return 0;
}

int settings_put_real(const setting *s, exp_kind k, void *x, double v,
                      char *why, size_t len)
{
    if (s->type != SET_DOUBLE)
        return fail(s, why, len, "%s", "wrong type");
    if (!isfinite(v) || v < s->lo || v > s->hi) {
        char num[32];
        snprintf(num, sizeof num, "%g", v);
        return fail(s, why, len, "%s is out of range", num);
    }
    *(double *)field(s, k, x) = v * scale_of(s);
    return 0;
}

int settings_put_bool(const setting *s, exp_kind k, void *x, bool v,
                      char *why, size_t len)
{
    if (s->type != SET_BOOL)
        return fail(s, why, len, "%s", "wrong type");
    *(bool *)field(s, k, x) = v;
    return 0;
}

/* The index of v among s->names, or -1 with why. */
static int pick(const setting *s, const char *v, char *why, size_t len)
{
    for (int i = 0; i < s->nnames; i++)
        if (strcmp(v, s->names[i]) == 0)
            return i;
    char hint[128], head[300];
    util_did_you_mean(hint, sizeof hint, v, s->names, s->nnames);
    snprintf(head, sizeof head, "unknown value \"%.80s\"%s", v, hint);
    fail(s, why, len, "%s", head);
    return -1;
}

/* "every:K" or a mode's name into the plan f; the plan is untouched on
 * error. */
static int put_recompute(const setting *s, plan_train *f, const char *v,
                         char *why, size_t len)
{
    plan_recompute mode;
    int every;
    if (plan_recompute_parse(v, &mode, &every) == 0) {
        f->recompute = mode;
        f->recompute_every = every;
        return 0;
    }
    static const char *const forms[] = {"none", "selective", "op", "full",
                                        "every:K"};
    char head[300];
    if (strncmp(v, "every", 5) == 0)
        snprintf(head, sizeof head, "\"%.80s\": every:K needs K, an integer "
                 "of at least 1", v);
    else {
        char hint[128];
        util_did_you_mean(hint, sizeof hint, v, forms,
                          (int)(sizeof forms / sizeof *forms));
        snprintf(head, sizeof head, "unknown value \"%.80s\"%s", v, hint);
    }
    return fail(s, why, len, "%s", head);
}

int settings_put_str(const setting *s, exp_kind k, void *x, const char *v,
                     char *why, size_t len)
{
    void *f = field(s, k, x);
    int i;
    dtype d;
    switch (s->type) {
    case SET_STR:
        if (strlen(v) >= s->size) {
            snprintf(why, len, "too long (expected at most %zu characters)",
                     s->size - 1);
            return -1;
        }
        memcpy(f, v, strlen(v) + 1);
        return 0;
    case SET_ENUM:
        if ((i = pick(s, v, why, len)) < 0)
            return -1;
        *(int *)f = i;
        return 0;
    case SET_DTYPE:
        if ((i = pick(s, v, why, len)) < 0 || dtype_parse(s->names[i], &d))
            return -1;
        *(int *)f = (int)d;
        return 0;
    case SET_RECOMPUTE:
        return put_recompute(s, f, v, why, len);
    default:
        return fail(s, why, len, "%s", "wrong type");
    }
}

/* Text as a user types it: a number, true/false, or a string (quotes
 * around it removed). */
int settings_parse(const setting *s, exp_kind k, void *x, const char *text,
                   char *why, size_t len)
{
    char *end;
    switch (s->type) {
    case SET_INT:
    case SET_LONG: {
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || end == text || *end)
            return fail(s, why, len, "\"%.60s\" is not an integer", text);
        return settings_put_int(s, k, x, v, why, len);
    }
    case SET_DOUBLE: {
        errno = 0;
        double v = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(v))
            return fail(s, why, len, "\"%.60s\" is not a number", text);
        return settings_put_real(s, k, x, v, why, len);
    }
    case SET_BOOL:
        if (strcmp(text, "true") && strcmp(text, "false"))
            return fail(s, why, len, "\"%.60s\" is not a bool", text);
        return settings_put_bool(s, k, x, text[0] == 't', why, len);
    case SET_INTLIST:
        return parse_ints(s, k, x, text, why, len);
    default: {
        size_t n = strlen(text);
        if (n >= 2 && text[0] == '"' && text[n - 1] == '"') {
            char *u = strndup(text + 1, n - 2);
            if (!u) {
                snprintf(why, len, "out of memory");
                return -1;
            }
            int rc = settings_put_str(s, k, x, u, why, len);
            free(u);
            return rc;
        }
        return settings_put_str(s, k, x, text, why, len);
    }
    }
}

const char *const exp_kind_command[EXP_KINDS] = {"train", "serve", "memory",
                                                 "compare"};

void settings_unknown(exp_kind k, const char *key, char *why, size_t len)
{
    const char *keys[SETTINGS_MAX];
    int n = settings_keys(k, keys, SETTINGS_MAX);
    char hint[200] = "";
    /* a key given without its group ("tp" for "parallel.tp") */
    for (int i = 0; i < n && !hint[0]; i++) {
        const char *dot = strrchr(keys[i], '.');
        if (dot && strcmp(dot + 1, key) == 0)
            snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", keys[i]);
    }
    if (!hint[0])
        util_did_you_mean(hint, sizeof hint, key, keys, n);
    if (n == 0)
        snprintf(why, len, "%s: unknown key (a%s %s experiment has no keys: "
                 "give its settings as flags)", key,
                 k == EXP_INFER ? "n" : "", exp_kind_names[k]);
    else
        snprintf(why, len, "%s: unknown key%s (expected a key of a%s %s "
                 "experiment; `llmsim help %s` lists them)", key, hint,
                 k == EXP_INFER ? "n" : "", exp_kind_names[k],
                 exp_kind_command[k]);
}

int settings_apply(exp_kind k, void *x, exp_src *src, const char *assign,
                   char *why, size_t len)
{
    const char *eq = strchr(assign, '=');
    char key[128];
    if (!eq || eq == assign || (size_t)(eq - assign) >= sizeof key) {
        snprintf(why, len, "\"%.80s\": expected KEY=VALUE (e.g. parallel.tp=4)",
                 assign);
        return -1;
    }
    snprintf(key, sizeof key, "%.*s", (int)(eq - assign), assign);
    const setting *s = settings_by_key(k, key);
    if (!s) {
        settings_unknown(k, key, why, len);
        return -1;
    }
    char sub[1200];
    if (settings_parse(s, k, x, eq + 1, sub, sizeof sub)) {
        snprintf(why, len, "%s: %s", key, sub);
        return -1;
    }
    if (src)
        src[settings_index(s)] = (exp_src){.how = SRC_SET};
    return 0;
}

/* A default is written as a user would write it but may lie outside the
 * bounds (-1: "the calibration data's"); it is stored as parsed. */
static void put_default(const setting *s, exp_kind k, void *x)
{
    void *f = field(s, k, x);
    const char *d = s->dflt;
    switch (s->type) {
    case SET_INT: *(int *)f = d ? atoi(d) : 0; return;
    case SET_LONG: *(long *)f = d ? atol(d) : 0; return;
    case SET_DOUBLE: {
        double v = d ? strtod(d, NULL) : 0;
        *(double *)f = v < 0 ? v : v * scale_of(s);
        return;
    }
    case SET_BOOL: *(bool *)f = d && strcmp(d, "true") == 0; return;
    case SET_STR: snprintf(f, s->size, "%s", d ? d : ""); return;
    case SET_INTLIST: ((plan_int_list *)f)->n = 0; return;
    case SET_ENUM: {
        int i = 0;
        while (d && i < s->nnames && strcmp(d, s->names[i]))
            i++;
        LLM_ASSERT(!d || i < s->nnames);
        *(int *)f = d ? i : 0;
        return;
    }
    case SET_DTYPE: {
        dtype v = DT_COUNT;
        LLM_ASSERT(!d || dtype_parse(d, &v) == 0);
        *(int *)f = (int)v;
        return;
    }
    case SET_RECOMPUTE: {
        plan_train *t = f;
        int rc = plan_recompute_parse(d ? d : "none", &t->recompute,
                                      &t->recompute_every);
        LLM_ASSERT(rc == 0);
        return;
    }
    }
}

void settings_reset(const setting *s, exp_kind k, void *x, exp_src *src)
{
    put_default(s, k, x);
    if (src)
        src[settings_index(s)] = (exp_src){.how = SRC_DEFAULT};
}

void settings_defaults(exp_kind k, void *x, exp_src *src)
{
    for (int i = 0; i < settings_count; i++)
        if (settings_table[i].at[k].in) {
            put_default(&settings_table[i], k, x);
            if (src)
                src[i] = (exp_src){.how = SRC_DEFAULT};
        }
}

/* ---- showing ------------------------------------------------------------------ */

void settings_format(const setting *s, exp_kind k, const void *x, char *buf,
                     size_t len)
{
    const void *f = (const char *)x + s->at[k].off;
    switch (s->type) {
    case SET_INT: snprintf(buf, len, "%d", *(const int *)f); return;
    case SET_LONG: snprintf(buf, len, "%ld", *(const long *)f); return;
    case SET_DOUBLE: {
        double v = *(const double *)f;
        snprintf(buf, len, "%.10g", v < 0 ? v : v / scale_of(s));
        return;
    }
    case SET_BOOL: snprintf(buf, len, "%s", *(const bool *)f ? "true" : "false"); return;
    case SET_STR: snprintf(buf, len, "%s", (const char *)f); return;
    case SET_ENUM: {
        int i = *(const int *)f;
        snprintf(buf, len, "%s", i >= 0 && i < s->nnames ? s->names[i] : "?");
        return;
    }
    case SET_DTYPE: {
        dtype d = (dtype)*(const int *)f;
        snprintf(buf, len, "%s", d == DT_COUNT ? "auto" : dtype_name(d));
        return;
    }
    case SET_RECOMPUTE: {
        char t[PLAN_RECOMPUTE_TEXT];
        snprintf(buf, len, "%s", plan_recompute_text(f, t));
        return;
    }
    case SET_INTLIST: {
        const plan_int_list *l = f;
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; i < l->n && n < len; i++)
            n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? "," : "",
                                  l->v[i]);
        return;
    }
    }
}

/* "--tp N", "--sp", "--schedule S" */
static void flag_text(const setting *s, char *buf, size_t len)
{
    const char *arg = "";
    switch (s->type) {
    case SET_INT:
    case SET_LONG: arg = " N"; break;
    case SET_DOUBLE: arg = " X"; break;
    case SET_BOOL: arg = s->flag_kind == FLAG_VALUE ? " true|false" : ""; break;
    case SET_STR: arg = " S"; break;
    case SET_INTLIST: arg = " N,N,..."; break;
    case SET_RECOMPUTE: arg = " MODE"; break;
    default: arg = " NAME"; break;
    }
    snprintf(buf, len, "--%s%s", s->flag, arg);
}

void settings_help_line(const setting *s, exp_kind k, char *buf, size_t len)
{
    char flag[64] = "", expect[200], dflt[160];
    if (s->flag)
        flag_text(s, flag, sizeof flag);
    settings_expect(s, expect, sizeof expect);
    if (s->dflt_help)
        snprintf(dflt, sizeof dflt, "%s", s->dflt_help);
    else if (s->type == SET_BOOL && s->flag_kind == FLAG_FALSE)
        snprintf(dflt, sizeof dflt, "on");
    else if (s->type == SET_BOOL && s->flag_kind == FLAG_TRUE)
        snprintf(dflt, sizeof dflt, "off");
    else if (!s->dflt && s->type == SET_STR)
        snprintf(dflt, sizeof dflt, "none");
    else
        snprintf(dflt, sizeof dflt, "%s%s%s", s->dflt ? s->dflt : "",
                 s->unit && s->unit[0] && s->type == SET_DOUBLE ? " " : "",
                 s->type == SET_DOUBLE && s->unit ? s->unit : "");
    const char *key = s->at[k].key ? s->at[k].key : "-";
    if (s->type == SET_BOOL && s->flag_kind != FLAG_VALUE)
        snprintf(buf, len, "  %-26s %-30s %s (default %s)", flag, key,
                 s->help, dflt);
    else
        snprintf(buf, len, "  %-26s %-30s %s: %s (default %s)", flag, key,
                 s->help, expect, dflt);
}
