/*
 * workload_check.c — the consistency of a workload's sections with each
 * other, once each is read (workload_read.c): the degrees of parallelism
 * against the chips, the heads, the layers, the experts and the batch, and
 * the mesh's shape against the chips. Each failure names the field it
 * refuses.
 */
#include <ctype.h>
#include <stdlib.h>

#include "model/workload_int.h"

/* The degrees against the chips, and each against what it splits: the
 * sequence (context), the heads (tensor), the layers (pipeline). */
static int sb__check_degrees(const sb_wl_rd *rd, const sb_workload *w)
{
    /* In double: four degrees of up to 2^30 each overflow a long. */
    double prod =
        (double)w->data * w->fsdp * w->tensor * w->pipeline * w->context;
    if (prod != (double)w->chips)
        return sb_wl_bad(rd, "$.parallelism",
                         "data x fsdp x tensor x pipeline x context "
                         "= %d x %d x %d x %d x %d = %.0f, but topology.chips "
                         "is %d",
                         w->data, w->fsdp, w->tensor, w->pipeline, w->context,
                         prod, w->chips);
    if (w->context > 1 && w->kind != SB_JOB_TRAIN)
        return sb_wl_bad(rd, "$.parallelism.context",
                         "%d: context parallelism is modelled for training "
                         "(a sequence split over chips); an inference job "
                         "takes 1",
                         w->context);
    if (w->context > 1 && w->seq_len % (2 * w->context) != 0)
        return sb_wl_bad(rd, "$.parallelism.context",
                         "%d: the sequence (%d tokens) must split into 2 x %d "
                         "equal chunks (the causal load balance)",
                         w->context, w->seq_len, w->context);
    if (w->q_heads % w->tensor != 0)
        return sb_wl_bad(rd, "$.parallelism.tensor",
                         "%d does not divide "
                         "model.q_heads (%d)",
                         w->tensor, w->q_heads);
    if (w->kind == SB_JOB_TRAIN && w->virtual_stages > 1 &&
        w->microbatches % w->pipeline != 0)
        return sb_wl_bad(rd, "$.parallelism.virtual_stages",
                         "%d needs microbatches (%d) to be a multiple of the "
                         "%d pipeline stages (the interleaved schedule runs "
                         "them in groups of that many)",
                         w->virtual_stages, w->microbatches, w->pipeline);
    if ((double)w->pipeline * w->virtual_stages > w->layers)
        return sb_wl_bad(rd, "$.parallelism.pipeline",
                         "%d stages x %d virtual stages is more than the %d "
                         "layers",
                         w->pipeline, w->virtual_stages, w->layers);
    return 0;
}

/* Expert parallelism: a MoE whose experts it divides, over the data
 * axes. */
static int sb__check_experts(const sb_wl_rd *rd, const sb_workload *w)
{
    if (w->expert <= 1)
        return 0;
    if (!w->experts)
        return sb_wl_bad(rd, "$.parallelism.expert",
                         "%d but the model has "
                         "no MoE",
                         w->expert);
    if (w->experts % w->expert != 0)
        return sb_wl_bad(rd, "$.parallelism.expert",
                         "%d does not divide "
                         "model.moe.experts (%d)",
                         w->expert, w->experts);
    if ((w->data * w->fsdp) % w->expert != 0)
        return sb_wl_bad(rd, "$.parallelism.expert",
                         "%d does not divide "
                         "data x fsdp (%d): experts are sharded over the "
                         "data axes",
                         w->expert, w->data * w->fsdp);
    return 0;
}

/* A training batch: whole sequences per replica, whole microbatches. */
static int sb__check_batch(const sb_wl_rd *rd, const sb_workload *w)
{
    if (w->kind != SB_JOB_TRAIN)
        return 0;
    if (w->global_batch % (w->data * w->fsdp) != 0)
        return sb_wl_bad(rd, "$.job.global_batch",
                         "%d is not a multiple "
                         "of data x fsdp (%d)",
                         w->global_batch, w->data * w->fsdp);
    if ((w->global_batch / (w->data * w->fsdp)) % w->microbatches != 0)
        return sb_wl_bad(rd, "$.job.microbatches",
                         "%d does not divide the "
                         "%d sequences per replica",
                         w->microbatches,
                         w->global_batch / (w->data * w->fsdp));
    return 0;
}

/* $.topology.mesh, when given: a shape like 4x4x4 of topology.chips. */
static int sb__check_mesh(const sb_wl_rd *rd, const sb_workload *w)
{
    if (!w->mesh[0])
        return 0;
    long mp = 1;
    const char *s = w->mesh;
    /* whole numbers >= 1 joined by x: every x between two of them */
    for (;;) {
        char *end;
        long d = isdigit((unsigned char)*s) ? strtol(s, &end, 10) : 0;
        if (d < 1 || d > 1000000 || mp > 1000000000L / d)
            return sb_wl_bad(rd, "$.topology.mesh",
                             "'%s' is not a shape "
                             "like 4x4x4",
                             w->mesh);
        mp *= d;
        s = end;
        if (!*s)
            break;
        if (*s != 'x' && *s != 'X')
            return sb_wl_bad(rd, "$.topology.mesh",
                             "'%s' is not a shape "
                             "like 4x4x4",
                             w->mesh);
        s++;
    }
    if (mp != w->chips)
        return sb_wl_bad(rd, "$.topology.mesh",
                         "'%s' has %ld chips but "
                         "topology.chips is %d",
                         w->mesh, mp, w->chips);
    return 0;
}

int sb_wl_check(const sb_wl_rd *rd, const sb_workload *w)
{
    int rc;
    TRY(sb__check_degrees(rd, w));
    TRY(sb__check_experts(rd, w));
    TRY(sb__check_batch(rd, w));
    return sb__check_mesh(rd, w);
}
