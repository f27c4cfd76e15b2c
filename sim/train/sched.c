#include "train/sched.h"

/* interleaved: the k-th forward (or backward) of a stage, Megatron's
 * get_model_chunk_id and microbatch numbering */
static sched_item chunk_item(int k, int p, int v, bool bwd)
{
    int group = k / (p * v);
    int in_group = k % (p * v);
    int chunk = in_group / p;
    if (bwd)
        chunk = v - 1 - chunk;
    return (sched_item){bwd, group * p + in_group % p, chunk};
}

int sched_order(plan_schedule kind, int p, int s, int m, int v,
                sched_item *out)
{
    int n = 0;
    if (kind == SCHED_GPIPE) {
        for (int i = 0; i < m; i++)
            out[n++] = (sched_item){false, i, 0};
        for (int i = 0; i < m; i++)
            out[n++] = (sched_item){true, i, 0};
        return n;
    }
    if (kind == SCHED_1F1B) {
        int warm = p - s - 1 < m ? p - s - 1 : m;
        for (int i = 0; i < warm; i++)
            out[n++] = (sched_item){false, i, 0};
        for (int i = 0; i < m - warm; i++) {
            out[n++] = (sched_item){false, warm + i, 0};
            out[n++] = (sched_item){true, i, 0};
        }
        for (int i = m - warm; i < m; i++)
            out[n++] = (sched_item){true, i, 0};
        return n;
    }
    if (m % p != 0)
        return -1;
    int total = m * v;
    int warm = (p - s - 1) * 2 + (v - 1) * p;
    if (warm > total)
        warm = total;
    for (int k = 0; k < warm; k++)
        out[n++] = chunk_item(k, p, v, false);
    for (int k = 0; k < total - warm; k++) {
        out[n++] = chunk_item(warm + k, p, v, false);
        out[n++] = chunk_item(k, p, v, true);
    }
    for (int k = total - warm; k < total; k++)
        out[n++] = chunk_item(k, p, v, true);
    return n;
}
