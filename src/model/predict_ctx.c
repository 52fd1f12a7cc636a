/*
 * predict_ctx.c — what a prediction works from, set up once per workload
 * (predict_int.h, sb_mdl_ctx_setup): the ceilings each kind of work runs
 * under (the job's peak and memory bandwidth, the matmuls' GEMM or peak,
 * the vector and transcendental rates, the decode-GEMM stream), the
 * efficiencies (datasheet or calibrated), and the shape of the job over
 * its chips.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/predict_int.h"
#include "solbench/hw.h"
#include "solbench/netmodel.h"
#include "solbench/workload.h"

/* The ceiling a matmul in `dtype` runs under: a measured GEMM of that
 * dtype when the machine model has one (a run: what the GEMM library
 * sustains), else the peak. */
static double sb__mm_peak(const sb_ceilings *c, const char *dtype,
                          const char **name)
{
    char nm[40];
    snprintf(nm, sizeof nm, "gemm.%s", dtype);
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->c[i].name, nm) == 0 && c->c[i].value > 0) {
            *name = c->c[i].name;
            return c->c[i].value;
        }
    return sb_ceil_peak(c, dtype, name);
}

/* The ceilings the phases run under: the job's peak and memory bandwidth
 * (refused when the machine model has neither), the peak of each kind of
 * work, the vector and transcendental rates, the decode-GEMM stream. */
static int sb__ctx_ceilings(sb_mdl_ctx *x, sb_err *err)
{
    const sb_workload *w = x->w;
    const sb_ceilings *c = x->c;
    sb_prediction *p = x->p;
    const char *pk_name = "none", *bw_name = "none";
    /* MFU's denominator: the peak of the dtype the matmuls run in */
    x->peak = sb_ceil_peak(c, w->mm_dtype, &pk_name);
    x->bw = sb_ceil_main_bw(c, &bw_name);
    snprintf(p->peak_name, sizeof p->peak_name, "%s", pk_name);
    snprintf(p->bw_name, sizeof p->bw_name, "%s", bw_name);
    x->host_bw = sb_ceil_get(c, "host.h2d");
    if (!(x->peak > 0))
        return sb_fail(err, SB_EINVAL,
                       "the machine model has no compute "
                       "peak for %s (nor a wider type)",
                       w->mm_dtype);
    if (!(x->bw > 0))
        return sb_fail(err, SB_EINVAL,
                       "the machine model has no memory "
                       "bandwidth (bw.HBM / bw.DRAM / bw.read / bw.triad)");
    p->peak_flops = x->peak;
    p->mem_bw = x->bw;
    snprintf(p->hw_kind, sizeof p->hw_kind, "%s", c->kind);
    x->pk[SB_WORK_MATMUL] =
        sb__mm_peak(c, w->mm_dtype, &x->pk_name[SB_WORK_MATMUL]);
    x->pk[SB_WORK_ATTENTION] =
        sb__mm_peak(c, w->attn_dtype, &x->pk_name[SB_WORK_ATTENTION]);
    x->pk[SB_WORK_ROUTER] =
        sb_ceil_peak(c, w->router_dtype, &x->pk_name[SB_WORK_ROUTER]);
    /* elementwise work: the vector unit where the machine model has one,
     * else the activations' peak */
    x->pk[SB_WORK_VECTOR] = sb_ceil_get(c, "vector.peak");
    x->pk_name[SB_WORK_VECTOR] = "vector.peak";
    if (!(x->pk[SB_WORK_VECTOR] > 0))
        x->pk[SB_WORK_VECTOR] =
            sb_ceil_peak(c, w->a_dtype, &x->pk_name[SB_WORK_VECTOR]);
    x->exp_rate = sb_ceil_get(c, "vector.exp");
    x->vec_rate = sb_ceil_get(c, "vector.peak");
    for (int k = 0; k < SB_WORK_N; k++)
        if (!(x->pk[k] > 0)) { /* a dtype the machine lacks: the job's */
            x->pk[k] = x->peak;
            x->pk_name[k] = p->peak_name;
        }
    snprintf(x->gemm_base, sizeof x->gemm_base, "gemm.%s", w->mm_dtype);
    snprintf(x->gemv_base, sizeof x->gemv_base, "gemv.%s", w->mm_dtype);
    x->bw_gemv = sb_ceil_get(c, x->gemv_base);
    x->gemm_rows = sb_ceil_at_rows(c, x->gemm_base, 1, NULL, 0) > 0;
    x->gemv_rows = sb_ceil_at_rows(c, x->gemv_base, 1, NULL, 0) > 0;
    snprintf(x->gemv_call_base, sizeof x->gemv_call_base, "gemv.call.%s",
             w->mm_dtype);
    x->gemv_call = sb_ceil_get(c, x->gemv_call_base);
    x->gemv_call_max_rows = sb_ceil_rows_max(c, x->gemv_call_base);
    snprintf(x->gemm_call_base, sizeof x->gemm_call_base, "gemm.call.%s",
             w->mm_dtype);
    x->gemm_call_max_rows = sb_ceil_rows_max(c, x->gemm_call_base);
    x->attn_call = sb_ceil_get(c, "attn.call");
    x->up_Bps = sb_ceil_get(c, "net.scaleup.beta_Bps");
    x->out_Bps = sb_ceil_get(c, "net.scaleout.beta_Bps");
    x->up_alpha_s = sb_ceil_get(c, "net.scaleup.alpha_s");
    x->out_alpha_s = sb_ceil_get(c, "net.scaleout.alpha_s");
    x->up_domain = sb_ceil_get(c, "net.scaleup.domain");
    for (int i = 0; i < c->n; i++) {
        const char *nm = c->c[i].name;
        size_t ln = strlen(nm);
        if (strncmp(nm, "net.", 4) == 0 && ln > 9 &&
            strcmp(nm + ln - 9, ".beta_Bps") == 0 &&
            strcmp(nm, "net.scaleup.beta_Bps") != 0 &&
            strcmp(nm, "net.scaleout.beta_Bps") != 0)
            x->net_fits = true;
    }
    return 0;
}

/* The efficiencies: 1 at the speed of light, the workload's in the
 * calibrated mode. */
static void sb__ctx_eff(sb_mdl_ctx *x, bool calibrated)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    for (int k = 0; k < SB_WORK_N; k++)
        x->eff[k] = 1.0;
    x->eff_mem = x->eff_net = 1.0;
    if (calibrated) {
        p->calibrated = x->calibrated = true;
        if (w->eff_matmul > 0)
            x->eff[SB_WORK_MATMUL] = x->eff[SB_WORK_ROUTER] = w->eff_matmul;
        if (w->eff_attention > 0)
            x->eff[SB_WORK_ATTENTION] = w->eff_attention;
        if (w->eff_memory > 0)
            x->eff_mem = x->eff[SB_WORK_VECTOR] = w->eff_memory;
        if (w->eff_network > 0)
            x->eff_net = w->eff_network;
    }
    p->eff_matmul = x->eff[SB_WORK_MATMUL];
    p->eff_attention = x->eff[SB_WORK_ATTENTION];
    p->eff_memory = x->eff_mem;
    p->eff_network = x->eff_net;
}

/* The model's shape as the phases see it: widths, parameters per layer,
 * the torus, the layers of the fullest stage, the expert groups. */
static void sb__ctx_shape(sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    x->mats = w->gated ? 3.0 : 2.0;
    x->dqk = w->head_dim + (w->mla ? w->rope_dim : 0);
    x->dv = w->head_dim;
    double d = w->d_model;
    x->p_o = (double)w->q_heads * w->head_dim * d;
    x->p_qkv = p->sizes.params_attn_layer - x->p_o;
    /* the fullest stage sets the pace when stages are uneven */
    /* the torus (validated by the reader: whole numbers joined by x) */
    for (const char *m = w->mesh; *m && x->ndims < 8;) {
        char *end;
        x->dims[x->ndims++] = strtod(m, &end);
        m = *end ? end + 1 : end;
    }
    x->Ls = (w->layers + w->pipeline - 1) / w->pipeline;
    x->stage_frac = (double)x->Ls * w->pipeline / w->layers;
    x->moe_layers_chip = (double)p->sizes.moe_layers * x->Ls / w->layers;
    x->dense_layers_chip = x->Ls - x->moe_layers_chip;
    if (w->fsdp % w->expert == 0) {
        x->fsdp_e = w->fsdp / w->expert;
        x->dp_e = w->data;
    } else {
        x->fsdp_e = 1;
        x->dp_e = w->data * w->fsdp / w->expert;
    }
}

int sb_mdl_ctx_setup(sb_mdl_ctx *x, bool calibrated, sb_err *err)
{
    int rc = sb__ctx_ceilings(x, err);
    if (rc)
        return rc;
    sb__ctx_eff(x, calibrated);
    sb__ctx_shape(x);
    return 0;
}
