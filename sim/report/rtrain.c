#include "report/rtrain.h"

#include <string.h>

#include "base/util.h"
#include "report/rjson.h"

/* "layers per stage 7, 8 x 14, 7" when the stages differ (runs of equal
 * stages folded). */
static void stage_split_text(FILE *fp, const model_spec *m,
                             const plan_train *p)
{
    int nv = plan_vstages(p);
    if (p->layers_per_stage.n == 0 && m->layers % nv == 0)
        return;
    fprintf(fp, "layers per %sstage ",
            p->schedule == SCHED_INTERLEAVED ? "virtual " : "");
    for (int vs = 0; vs < nv;) {
        int a, b, run = 1;
        plan_vstage_layers(m, p, vs, &a, &b);
        for (int c, d; vs + run < nv; run++) {
            plan_vstage_layers(m, p, vs + run, &c, &d);
            if (d - c != b - a)
                break;
        }
        if (run > 1)
            fprintf(fp, "%s%d x %d", vs ? ", " : "", b - a, run);
        else
            fprintf(fp, "%s%d", vs ? ", " : "", b - a);
        vs += run;
    }
    fprintf(fp, "\n");
}

/* The stack and what it made the step assume. */
static void stack_text(FILE *fp, const exp_train_out *o)
{
    const stack_spec *st = &o->env.stack;
    const plan_train *p = &o->plan;
    const char *attn = !p->flash_attn ? "unfused (scores kept)"
                       : o->r.attn_kernel[0] ? o->r.attn_kernel
                                             : "the GPU's attention.tsv";
    const topo_nodespec *ns = &o->env.t->spec;
    double host_us = train_host_us_per_kernel(st, ns);
    char host[96] = "";
    if (ns->host_cpu[0])
        snprintf(host, sizeof host, " on %s (%.2f x the reference host)",
                 ns->host_cpu, ns->host_speed);
    fprintf(fp, "stack %s (%s): attention %s; norm %.3g, RoPE %.3g, "
                "activation %.3g, copies %.3g passes; host %.3g us%s x %.3g "
                "kernels a layer%s; optimizer %.3g passes",
            st->name, st->display, attn, st->norm_passes, st->rope_passes,
            st->act_passes, st->copy_passes, host_us, host,
            st->kernels_per_layer, st->cuda_graphs ? " (CUDA graphs)" : "",
            st->optimizer_passes);
    if (p->precision == DT_FP8)
        fprintf(fp, "; FP8 casts %.3g/%.3g/%.3g B (input/weight/grad), "
                    "weights %s, attention %s",
                st->fp8_act_cast_bytes, st->fp8_weight_cast_bytes,
                st->fp8_grad_cast_bytes,
                st->fp8_weight_cache ? "cast once a step"
                                     : "cast every microbatch",
                p->fp8_attention && st->fp8_attention ? "fp8" : "16-bit");
    if (p->tp_overlap && p->tp > 1)
        fprintf(fp, "; TP overlap hides %.0f%% of what the GEMMs cover",
                100 * st->tp_overlap_hidden);
    if (p->zero >= 3 && st->z3_gather == STACK_GATHER_MODULE) {
        stack_z3 z = stack_z3_sizes(st, o->env.m.hidden, p->z3_prefetch_params,
                                    p->z3_max_live_params, p->z3_reduce_params);
        fprintf(fp, "; ZeRO-3 gathers per module: prefetch %.3g, live %.3g, "
                    "persistent under %.3g, reduce bucket %.3g elements",
                z.prefetch, z.max_live, z.persist, z.reduce);
    }
    if (p->zero >= 3 && st->z3_gather == STACK_GATHER_LAYER &&
        st->fsdp_backward_prefetch == STACK_PREFETCH_POST)
        fprintf(fp, "; FSDP gathers the next block after this block's "
                    "gradients (BACKWARD_POST)");
    if (p->zero >= 3 && st->z3_internode_Bps > 0)
        fprintf(fp, "; across nodes each GPU's gathers and reduce-scatters "
                    "move at most %.3g GB/s (the stack's published runs)",
                st->z3_internode_Bps / 1e9);
    fprintf(fp, "\n");
    if (p->precision == DT_FP8)
        fprintf(fp, "training load: tensor cores at %.1f%% (FP8) and %.1f%% "
                    "(16-bit) of the kernel tables' rate "
                    "(calib/training-load.tsv)\n",
                100 * o->r.tensor_load_fp8, 100 * o->r.tensor_load_16bit);
    else
        fprintf(fp, "training load: tensor cores at %.1f%% of the kernel "
                    "tables' rate (calib/training-load.tsv)\n",
                100 * o->r.tensor_load_16bit);
}

void rtrain_text(FILE *fp, const exp_train_out *o)
{
    const model_spec *m = &o->env.m;
    const topo *t = o->env.t;
    const plan_train *p = &o->plan;
    const train_result *r = &o->r;
    if (!exp_train_fits(o))
        fprintf(fp, "DOES NOT FIT: the memory peak, %.2f GiB per GPU on stage "
                    "%d, exceeds the %s's %.1f GiB; the figures below are for "
                    "a GPU with enough memory (`llmsim memory --train` lists "
                    "remedies)\n\n",
                r->memory_peak_bytes / GiB, r->memory.stage, t->gpu->name,
                t->gpu->memory_bytes / GiB);
    fprintf(fp, "%s on %s (%d of %d GPUs, %s): tp %d, pp %d, dp %d, cp %d, ep %d%s\n",
           m->display, t->name, plan_train_gpus(p), t->ngpu,
           t->gpu ? t->gpu->name : "?", p->tp, p->pp, p->dp, p->cp, p->ep,
           p->sp ? ", sequence parallel" : "");
    char lora[32] = "", rc[PLAN_RECOMPUTE_TEXT], ce[40] = "";
    if (p->lora_rank > 0)
        snprintf(lora, sizeof lora, "; LoRA rank %d", p->lora_rank);
    if (p->loss != LOSS_FUSED)
        snprintf(ce, sizeof ce, "; %s cross-entropy", plan_loss_names[p->loss]);
    fprintf(fp, "micro-batch %d x %d microbatches x dp %d = %d sequences of %d "
           "tokens; %s%s; recompute %s%s; ZeRO-%d; %s%s\n",
           p->micro_batch, r->microbatches, p->dp,
           p->micro_batch * r->microbatches * p->dp, p->seq_len,
           plan_schedule_names[p->schedule],
           p->schedule == SCHED_INTERLEAVED ? " (virtual stages)" : "",
           plan_recompute_text(p, rc), ce, p->zero,
           dtype_name(p->precision), lora);
    stage_split_text(fp, m, p);
    stack_text(fp, o);
    fprintf(fp, "\n");
    const band_est *b = &o->band;
    char bs[200], bt[200], bf[200], bm[40];
    band_text(bs, sizeof bs, b, r->step_s, "%.3g", false);
    bt[0] = bf[0] = bm[0] = '\0'; /* no band: said once, on the step time */
    if (b->have) {
        band_text(bt, sizeof bt, b, r->tokens_per_s, "%.0f", true);
        band_text(bf, sizeof bf, b, r->model_tflops_per_gpu, "%.0f", true);
        double lo, hi;
        band_ends(b, 100 * r->mfu, true, &lo, &hi);
        snprintf(bm, sizeof bm, " (%.1f-%.1f%%)", lo, hi);
    }
    fprintf(fp, "  step time          %10.3f s%s\n", r->step_s, bs);
    fprintf(fp, "  per microbatch                 stage 0: forward %.2f ms, "
           "backward %.2f ms\n", r->fwd_s * 1e3, r->bwd_s * 1e3);
    fprintf(fp, "  throughput         %10.0f tokens/s%s, %.2f samples/s\n",
           r->tokens_per_s, bt, r->samples_per_s);
    fprintf(fp, "  model TFLOP/s/GPU  %10.1f%s   MFU %.1f%%%s\n",
           r->model_tflops_per_gpu, bf, 100 * r->mfu, bm);
    if (b->have)
        fprintf(fp, "  error band         %s: measured / predicted %.2f-%.2f "
               "over %d check cases of `make validate` (this run: %s)\n",
               b->family, b->lo, b->hi, b->cases, b->key);
    fprintf(fp, "  hardware TFLOP/s   %10.1f   (executed)\n",
           r->hw_tflops_per_gpu);
    fprintf(fp, "  pipeline bubble    %10.1f%%\n", 100 * r->bubble_fraction);
    fprintf(fp, "  exposed comm (s)   ");
    for (int k = 0; k < COMM_KINDS; k++)
        fprintf(fp, " %s %.3f", train_comm_names[k], r->exposed_comm_s[k]);
    fprintf(fp, "\n  GPU-Util           %10.1f%%  (SM efficiency %.1f%% of peak "
           "while busy)\n",
           100 * r->gpu_util, 100 * r->sm_efficiency);
    if (r->loader_need_s > 0) {
        if (r->input_bound)
            fprintf(fp, "  input pipeline     INPUT-BOUND: the step waits %.3f s "
                   "(%.1f%%) for data; loading a step's microbatches takes "
                   "%.3f s of the workers\n",
                   r->input_wait_s, 100 * r->input_wait_s / r->step_s,
                   r->loader_need_s);
        else
            fprintf(fp, "  input pipeline     keeps up: the workers need %.3f s "
                   "per step (%.0f%% of it)\n",
                   r->loader_need_s, 100 * r->loader_need_s / r->step_s);
    }
    const train_interference *f = &r->interference;
    if (f->extra_s > 0)
        fprintf(fp, "  overlap slowdown   %10.2f ms  (gradient reduction holds %d "
               "SMs and %.0f%% of HBM: overlapped compute %.1f%% slower)\n",
               f->extra_s * 1e3, f->comm_sms, 100 * f->hbm_frac,
               100 * f->slowdown);
    if (r->ntop_links > 0)
        fprintf(fp, "  busiest links      (bytes of the step / (achievable bandwidth "
               "x step time))\n");
    for (int i = 0; i < r->ntop_links; i++) {
        const train_link_use *u = &r->top_links[i];
        const topo_link *L = &t->link[u->link];
        fprintf(fp, "    %-12s -> %-12s %-8s %5.1f%%  %9.1f GB:",
               t->dev[L->src].name, t->dev[L->dst].name,
               topo_link_kind_name(L->kind), 100 * u->utilization,
               u->bytes / 1e9);
        for (int k = 0; k < COMM_KINDS; k++)
            if (u->bytes_by_kind[k] > 0)
                fprintf(fp, " %s %.0f%%", train_comm_names[k],
                       100 * u->bytes_by_kind[k] / u->bytes);
        fprintf(fp, "\n");
    }
    fprintf(fp, "  memory peak        %10.2f GiB per GPU on stage %d (of %.1f)%s\n",
           r->memory_peak_bytes / GiB, r->memory.stage,
           t->gpu ? t->gpu->memory_bytes / GiB : 0,
           exp_train_fits(o) ? "" : "  DOES NOT FIT");
    const mem_result *mr = &r->memory;
    fprintf(fp, "                     weights %.2f, gradients %.2f, optimizer %.2f, "
           "activations %.2f, overheads %.2f GiB\n",
           mr->weights / GiB, mr->gradients / GiB, mr->optimizer / GiB,
           mr->activations / GiB, mr->overhead / GiB);
    int v = p->schedule == SCHED_INTERLEAVED ? p->vpp : 1;
    double per_chunk = (double)plan_stage_layer_count(m, p, r->memory.stage) / v;
    fprintf(fp, "                     at %.3f s, holding %d microbatch%s "
           "activations (as the schedule ran; `llmsim memory` counts %.0f)\n",
           r->memory_peak_at_s, r->chunks_held,
           v > 1 ? "-chunks'" : "es'",
           r->memory.act_layers_held / per_chunk);
}

json_t *rtrain_json(const exp_train_out *o)
{
    const train_result *r = &o->r;
    const topo *t = o->env.t;
    const plan_train *p = &o->plan;
    json_t *j = json_object();
    int gpus = plan_train_gpus(p);
    json_object_set_new(j, "gpu", json_string(t->gpu ? t->gpu->name : "?"));
    json_object_set_new(j, "gpus", json_integer(gpus));
    json_object_set_new(j, "gpu_memory_bytes",
                        rjson_bytes(t->gpu ? t->gpu->memory_bytes : 0));
    json_object_set_new(j, "plan", rjson_plan(p, &o->env.m));
    json_t *st = json_object();
    json_object_set_new(st, "name", json_string(o->env.stack.name));
    json_object_set_new(st, "attention_kernel",
                        json_string(o->r.attn_kernel));
    const stack_spec *sp = &o->env.stack;
    json_object_set_new(st, "zero3_gather",
                        json_string(stack_gather_names[sp->z3_gather]));
    json_object_set_new(st, "tp_overlap_hidden",
                        json_real(sp->tp_overlap_hidden));
    json_object_set_new(st, "host_us_per_kernel",
                        json_real(train_host_us_per_kernel(sp, &t->spec)));
    json_object_set_new(st, "host_cpu",
                        json_string(t->spec.host_cpu[0] ? t->spec.host_cpu
                                                        : "reference"));
    json_object_set_new(st, "host_speed", json_real(t->spec.host_speed));
    if (sp->z3_gather == STACK_GATHER_MODULE) {
        stack_z3 z = stack_z3_sizes(sp, o->env.m.hidden, p->z3_prefetch_params,
                                    p->z3_max_live_params, p->z3_reduce_params);
        json_object_set_new(st, "zero3_prefetch_params", json_real(z.prefetch));
        json_object_set_new(st, "zero3_max_live_params", json_real(z.max_live));
        json_object_set_new(st, "zero3_persist_params", json_real(z.persist));
        json_object_set_new(st, "zero3_reduce_bucket_params",
                            json_real(z.reduce));
    }
    json_object_set_new(
        st, "fsdp_backward_prefetch",
        json_string(stack_prefetch_names[sp->fsdp_backward_prefetch]));
    if (sp->z3_internode_Bps > 0)
        json_object_set_new(st, "zero3_internode_GBps",
                            json_real(sp->z3_internode_Bps / 1e9));
    json_object_set_new(j, "stack", st);
    json_t *load = json_object();
    json_object_set_new(load, "tensor_16bit",
                        json_real(o->r.tensor_load_16bit));
    json_object_set_new(load, "tensor_fp8", json_real(o->r.tensor_load_fp8));
    json_object_set_new(j, "training_load", load);
    json_object_set_new(j, "fits", json_boolean(exp_train_fits(o)));
    json_object_set_new(j, "step_time_s", json_real(r->step_s));
    json_object_set_new(j, "tokens_per_s", json_real(r->tokens_per_s));
    json_object_set_new(j, "samples_per_s", json_real(r->samples_per_s));
    json_object_set_new(j, "model_tflops_per_gpu",
                        json_real(r->model_tflops_per_gpu));
    json_object_set_new(j, "band", rjson_band(&o->band));
    rjson_band_ends(j, &o->band, "step_time_s", r->step_s, false);
    rjson_band_ends(j, &o->band, "tokens_per_s", r->tokens_per_s, true);
    rjson_band_ends(j, &o->band, "model_tflops_per_gpu",
                    r->model_tflops_per_gpu, true);
    rjson_band_ends(j, &o->band, "mfu", r->mfu, true);
    json_object_set_new(j, "hw_tflops_per_gpu", json_real(r->hw_tflops_per_gpu));
    json_object_set_new(j, "mfu", json_real(r->mfu));
    json_object_set_new(j, "memory_peak_bytes",
                        rjson_bytes(r->memory_peak_bytes));
    json_t *mb = json_object();
    json_object_set_new(mb, "weights", rjson_bytes(r->memory.weights));
    json_object_set_new(mb, "gradients", rjson_bytes(r->memory.gradients));
    json_object_set_new(mb, "optimizer", rjson_bytes(r->memory.optimizer));
    json_object_set_new(mb, "activations",
                        rjson_bytes(r->memory.activations));
    json_object_set_new(mb, "overhead", rjson_bytes(r->memory.overhead));
    json_object_set_new(mb, "stage", json_integer(r->memory.stage));
    json_object_set_new(j, "memory_breakdown_bytes", mb);
    json_object_set_new(j, "memory_peak_at_s", json_real(r->memory_peak_at_s));
    json_object_set_new(j, "activation_chunks_held", json_integer(r->chunks_held));
    json_object_set_new(j, "bubble_fraction", json_real(r->bubble_fraction));
    json_object_set_new(j, "gpu_util", json_real(r->gpu_util));
    json_object_set_new(j, "sm_efficiency", json_real(r->sm_efficiency));
    json_t *x = json_object();
    for (int k = 0; k < COMM_KINDS; k++)
        json_object_set_new(x, train_comm_names[k],
                            json_real(r->exposed_comm_s[k]));
    json_object_set_new(j, "exposed_comm_s", x);
    json_t *f = json_object();
    json_object_set_new(f, "extra_s", json_real(r->interference.extra_s));
    json_object_set_new(f, "comm_sms", json_integer(r->interference.comm_sms));
    json_object_set_new(f, "hbm_fraction", json_real(r->interference.hbm_frac));
    json_object_set_new(f, "slowdown", json_real(r->interference.slowdown));
    json_object_set_new(j, "interference", f);
    json_t *links = json_array();
    for (int i = 0; i < r->ntop_links; i++) {
        const train_link_use *u = &r->top_links[i];
        json_t *l = rjson_link(t, u->link, u->bytes, u->utilization);
        json_t *by = json_object();
        for (int k = 0; k < COMM_KINDS; k++)
            json_object_set_new(by, train_comm_names[k],
                                json_real(u->bytes_by_kind[k]));
        json_object_set_new(l, "bytes_by_kind", by);
        json_array_append_new(links, l);
    }
    json_object_set_new(j, "busiest_links", links);
    json_object_set_new(j, "input_wait_s", json_real(r->input_wait_s));
    json_object_set_new(j, "input_bound", json_boolean(r->input_bound));
    json_object_set_new(j, "microbatches", json_integer(r->microbatches));
    json_object_set_new(j, "events", json_integer((json_int_t)r->events));
    json_object_set_new(j, "network_events",
                        json_integer((json_int_t)r->net_events));
    json_object_set_new(j, "dp_bytes_per_gpu", json_real(r->dp_bytes_per_gpu));
    if (t->gpu) {
        double w = o->power_w_per_gpu;
        json_object_set_new(j, "power_w_per_gpu", json_real(w));
        json_object_set_new(j, "energy_per_token_j",
                            json_real(w * gpus / r->tokens_per_s));
    }
    return j;
}

/* ---- Chrome trace ---------------------------------------------------------- */
