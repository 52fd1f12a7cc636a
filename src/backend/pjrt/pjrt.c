/*
 * pjrt.c — the PJRT C API behind pjrt.h: one plugin a process (any plugin
 * exporting GetPjrtApi: libtpu, the CUDA plugin, a CPU plugin), its client
 * and devices, buffers, compiled programs and awaited executions.
 *
 * The plugin is dlopen'ed, never linked: the build needs only the C API
 * header (pjrt_c_api.h, from the plugin's package), and a machine without
 * a plugin runs everything else. The API version is checked against the
 * header's major version (a different major is refused; minors are
 * compatible by the API's rules, every struct carrying its size).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pjrt_c_api.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/timer.h"

struct sb_pjrt {
    void *dl;
    const PJRT_Api *api;
    PJRT_Client *client;
    PJRT_Device *const *devs;
    size_t ndev;
    char platform[64], kind[128], path[1024];
    char what[1400]; /* the note every result carries */
};

static sb_pjrt g_pjrt;
static int g_rc;
static sb_err g_err;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* One line from a PJRT error (which is destroyed); SB_EIO. */
static int fail(const PJRT_Api *api, PJRT_Error *e, const char *what,
                sb_err *err)
{
    if (!e)
        return 0;
    PJRT_Error_Message_Args m = {
        .struct_size = PJRT_Error_Message_Args_STRUCT_SIZE, .error = e};
    api->PJRT_Error_Message(&m);
    int rc = sb_fail(err, SB_EIO, "pjrt: %s: %.*s", what, (int)m.message_size,
                     m.message ? m.message : "");
    PJRT_Error_Destroy_Args d = {
        .struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE, .error = e};
    api->PJRT_Error_Destroy(&d);
    return rc;
}

static int await_event(const PJRT_Api *api, PJRT_Event *ev, const char *what,
                       sb_err *err)
{
    if (!ev)
        return 0;
    PJRT_Event_Await_Args a = {.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE,
                               .event = ev};
    int rc = fail(api, api->PJRT_Event_Await(&a), what, err);
    PJRT_Event_Destroy_Args d = {
        .struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE, .event = ev};
    api->PJRT_Event_Destroy(&d);
    return rc;
}

static void open_once(void)
{
    sb_pjrt *p = &g_pjrt;
    sb_err *err = &g_err;
    const char *path = getenv("SOLBENCH_PJRT_PLUGIN");
#ifdef SB_PJRT_PLUGIN_DEFAULT
    if (!path || !*path)
        path = SB_PJRT_PLUGIN_DEFAULT;
#endif
    if (!path || !*path) {
        g_rc = sb_fail(err, SB_EUNSUP,
                       "no PJRT plugin (run --pjrt-plugin PATH or "
                       "$SOLBENCH_PJRT_PLUGIN; docs/PJRT.md)");
        return;
    }
    snprintf(p->path, sizeof p->path, "%s", path);
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        const char *why = dlerror();
        g_rc = sb_fail(err, SB_EUNSUP, "PJRT plugin %s does not load: %s", path,
                       why ? why : "?");
        return;
    }
    const PJRT_Api *(*get)(void) =
        (const PJRT_Api *(*)(void))dlsym(p->dl, "GetPjrtApi");
    if (!get || !(p->api = get())) {
        g_rc = sb_fail(err, SB_EUNSUP,
                       "%s is not a PJRT plugin (no GetPjrtApi)", path);
        return;
    }
    const PJRT_Api *api = p->api;
    if (api->pjrt_api_version.major_version != PJRT_API_MAJOR) {
        g_rc = sb_fail(err, SB_EUNSUP,
                       "PJRT plugin %s speaks API %d.%d, this solbench %d.%d",
                       path, api->pjrt_api_version.major_version,
                       api->pjrt_api_version.minor_version, PJRT_API_MAJOR,
                       PJRT_API_MINOR);
        return;
    }
    if (api->PJRT_Plugin_Initialize) {
        PJRT_Plugin_Initialize_Args ia = {
            .struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE};
        if ((g_rc = fail(api, api->PJRT_Plugin_Initialize(&ia),
                         "PJRT_Plugin_Initialize", err)))
            return;
    }
    PJRT_Client_Create_Args ca = {.struct_size =
                                      PJRT_Client_Create_Args_STRUCT_SIZE};
    if ((g_rc = fail(api, api->PJRT_Client_Create(&ca), "PJRT_Client_Create",
                     err)))
        return;
    p->client = ca.client;
    PJRT_Client_PlatformName_Args pa = {
        .struct_size = PJRT_Client_PlatformName_Args_STRUCT_SIZE,
        .client = p->client};
    if ((g_rc = fail(api, api->PJRT_Client_PlatformName(&pa),
                     "PJRT_Client_PlatformName", err)))
        return;
    snprintf(p->platform, sizeof p->platform, "%.*s",
             (int)pa.platform_name_size, pa.platform_name);
    PJRT_Client_AddressableDevices_Args da = {
        .struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE,
        .client = p->client};
    if ((g_rc = fail(api, api->PJRT_Client_AddressableDevices(&da),
                     "PJRT_Client_AddressableDevices", err)))
        return;
    p->devs = da.addressable_devices;
    p->ndev = da.num_addressable_devices;
    if (p->ndev == 0) {
        g_rc = sb_fail(err, SB_EUNSUP, "PJRT plugin %s: no addressable device",
                       path);
        return;
    }
    PJRT_Device_GetDescription_Args ga = {
        .struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE,
        .device = p->devs[0]};
    if ((g_rc = fail(api, api->PJRT_Device_GetDescription(&ga),
                     "PJRT_Device_GetDescription", err)))
        return;
    PJRT_DeviceDescription_Kind_Args ka = {
        .struct_size = PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE,
        .device_description = ga.device_description};
    if ((g_rc = fail(api, api->PJRT_DeviceDescription_Kind(&ka),
                     "PJRT_DeviceDescription_Kind", err)))
        return;
    snprintf(p->kind, sizeof p->kind, "%.*s", (int)ka.device_kind_size,
             ka.device_kind);
    snprintf(p->what, sizeof p->what,
             "pjrt: platform %s, device %s (%zu device%s), API %d.%d, "
             "plugin %s",
             p->platform, p->kind, p->ndev, p->ndev == 1 ? "" : "s",
             api->pjrt_api_version.major_version,
             api->pjrt_api_version.minor_version, p->path);
}

int sb_pjrt_open(sb_pjrt **out, sb_err *err)
{
    pthread_once(&g_once, open_once);
    if (g_rc) {
        if (err)
            *err = g_err;
        return g_rc;
    }
    *out = &g_pjrt;
    return 0;
}

const char *sb_pjrt_platform(const sb_pjrt *p)
{
    return p->platform;
}
const char *sb_pjrt_describe(const sb_pjrt *p)
{
    return p->what;
}

static PJRT_Buffer_Type type_of(sb_pjrt_type t)
{
    return t == SB_PJRT_BF16  ? PJRT_Buffer_Type_BF16
           : t == SB_PJRT_S32 ? PJRT_Buffer_Type_S32
                              : PJRT_Buffer_Type_F32;
}

int sb_pjrt_upload(sb_pjrt *p, const void *data, sb_pjrt_type type,
                   const int64_t *dims, int ndims, sb_pjrt_buf **out,
                   sb_err *err)
{
    const PJRT_Api *api = p->api;
    PJRT_Client_BufferFromHostBuffer_Args a = {
        .struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE,
        .client = p->client,
        .data = data,
        .type = type_of(type),
        .dims = dims,
        .num_dims = (size_t)ndims,
        .host_buffer_semantics =
            PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
        .device = p->devs[0]};
    int rc = fail(api, api->PJRT_Client_BufferFromHostBuffer(&a),
                  "PJRT_Client_BufferFromHostBuffer", err);
    if (rc)
        return rc;
    /* the host data may be reused once the transfer says so, and the
     * buffer is on the device when its ready event fires */
    PJRT_Buffer_ReadyEvent_Args ra = {
        .struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE,
        .buffer = a.buffer};
    if ((rc = await_event(api, a.done_with_host_buffer, "the upload", err)) ||
        (rc = fail(api, api->PJRT_Buffer_ReadyEvent(&ra),
                   "PJRT_Buffer_ReadyEvent", err)) ||
        (rc = await_event(api, ra.event, "the uploaded buffer", err))) {
        sb_pjrt_buf_free(p, (sb_pjrt_buf *)a.buffer);
        return rc;
    }
    *out = (sb_pjrt_buf *)a.buffer;
    return 0;
}

int sb_pjrt_download(sb_pjrt *p, sb_pjrt_buf *b, void *dst, size_t bytes,
                     sb_err *err)
{
    const PJRT_Api *api = p->api;
    PJRT_Buffer_ToHostBuffer_Args a = {
        .struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE,
        .src = (PJRT_Buffer *)b,
        .dst = dst,
        .dst_size = bytes};
    int rc = fail(api, api->PJRT_Buffer_ToHostBuffer(&a),
                  "PJRT_Buffer_ToHostBuffer", err);
    if (rc)
        return rc;
    return await_event(api, a.event, "the download", err);
}

void sb_pjrt_buf_free(sb_pjrt *p, sb_pjrt_buf *b)
{
    if (!b)
        return;
    PJRT_Buffer_Destroy_Args a = {.struct_size =
                                      PJRT_Buffer_Destroy_Args_STRUCT_SIZE,
                                  .buffer = (PJRT_Buffer *)b};
    sb_err ignored = {0};
    fail(p->api, p->api->PJRT_Buffer_Destroy(&a), "PJRT_Buffer_Destroy",
         &ignored);
}

/* xla.CompileOptionsProto with executable_build_options (field 3) holding
 * num_replicas = 1 (field 4) and num_partitions = 1 (field 5). */
static const char one_replica[] = {0x1A, 0x04, 0x20, 0x01, 0x28, 0x01};

int sb_pjrt_compile(sb_pjrt *p, sb_pjrt_exe **out, sb_err *err, const char *fmt,
                    ...)
{
    char mlir[8192];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(mlir, sizeof mlir, fmt, ap);
    va_end(ap);
    if (len < 0 || len >= (int)sizeof mlir)
        return sb_fail(err, SB_EINVAL, "pjrt: the program does not fit");
    const PJRT_Api *api = p->api;
    PJRT_Program prog = {.struct_size = PJRT_Program_STRUCT_SIZE,
                         .code = (char *)mlir,
                         .code_size = strlen(mlir),
                         .format = "mlir",
                         .format_size = 4};
    PJRT_Client_Compile_Args a = {.struct_size =
                                      PJRT_Client_Compile_Args_STRUCT_SIZE,
                                  .client = p->client,
                                  .program = &prog,
                                  .compile_options = one_replica,
                                  .compile_options_size = sizeof one_replica};
    int rc =
        fail(api, api->PJRT_Client_Compile(&a), "PJRT_Client_Compile", err);
    if (rc == 0)
        *out = (sb_pjrt_exe *)a.executable;
    return rc;
}

void sb_pjrt_exe_free(sb_pjrt *p, sb_pjrt_exe *e)
{
    if (!e)
        return;
    PJRT_LoadedExecutable_Destroy_Args a = {
        .struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE,
        .executable = (PJRT_LoadedExecutable *)e};
    sb_err ignored = {0};
    fail(p->api, p->api->PJRT_LoadedExecutable_Destroy(&a),
         "PJRT_LoadedExecutable_Destroy", &ignored);
}

int sb_pjrt_execute(sb_pjrt *p, sb_pjrt_exe *e, sb_pjrt_buf *const *args,
                    int nargs, sb_pjrt_buf **out, sb_err *err)
{
    const PJRT_Api *api = p->api;
    PJRT_ExecuteOptions opts = {.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE};
    PJRT_Buffer *const *lists[1] = {(PJRT_Buffer *const *)args};
    PJRT_Buffer *outs[1] = {NULL};
    PJRT_Buffer **out_lists[1] = {outs};
    PJRT_Event *done[1] = {NULL};
    PJRT_LoadedExecutable_Execute_Args a = {
        .struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE,
        .executable = (PJRT_LoadedExecutable *)e,
        .options = &opts,
        .argument_lists = lists,
        .num_devices = 1,
        .num_args = (size_t)nargs,
        .output_lists = out_lists,
        .device_complete_events = done};
    int rc = fail(api, api->PJRT_LoadedExecutable_Execute(&a),
                  "PJRT_LoadedExecutable_Execute", err);
    if (rc)
        return rc;
    rc = await_event(api, done[0], "the execution", err);
    if (rc) {
        sb_pjrt_buf_free(p, (sb_pjrt_buf *)outs[0]);
        return rc;
    }
    *out = (sb_pjrt_buf *)outs[0];
    return 0;
}

int sb_pjrt_count_set(sb_pjrt *p, sb_pjrt_count *c, uint64_t n, sb_err *err)
{
    if (c->buf && c->n == n)
        return 0;
    if (n > 2147483647u)
        return sb_fail(err, SB_EINVAL, "pjrt: a loop of %llu iterations",
                       (unsigned long long)n);
    sb_pjrt_count_free(p, c);
    int32_t v = (int32_t)n;
    int rc = sb_pjrt_upload(p, &v, SB_PJRT_S32, NULL, 0, &c->buf, err);
    if (rc == 0)
        c->n = n;
    return rc;
}

void sb_pjrt_count_free(sb_pjrt *p, sb_pjrt_count *c)
{
    sb_pjrt_buf_free(p, c->buf);
    c->buf = NULL;
    c->n = 0;
}

int sb_pjrt_loop_run(sb_pjrt_loop *l, uint64_t n, sb_pjrt_buf **out,
                     sb_err *err)
{
    int rc = sb_pjrt_count_set(l->p, &l->count, n, err);
    if (rc)
        return rc;
    l->args[l->nargs - 1] = l->count.buf;
    return sb_pjrt_execute(l->p, l->exe, l->args, l->nargs, out, err);
}

void sb_pjrt_loop_free(sb_pjrt_loop *l)
{
    if (!l->p)
        return;
    sb_pjrt_count_free(l->p, &l->count);
    sb_pjrt_exe_free(l->p, l->exe);
    l->exe = NULL;
}

static int loop_sample(void *state, int idx, uint64_t iters, double *secs,
                       sb_err *err)
{
    (void)idx;
    sb_pjrt_loop *l = state;
    sb_pjrt_buf *out = NULL;
    /* a new count's upload stays out of the timed launch */
    int rc = sb_pjrt_count_set(l->p, &l->count, iters, err);
    if (rc)
        return rc;
    double t0 = sb_now();
    rc = sb_pjrt_loop_run(l, iters, &out, err);
    *secs = sb_now() - t0;
    sb_pjrt_buf_free(l->p, out);
    return rc;
}

const sb_timer sb_pjrt_timer = {.min_sample_s = 10e-3, .sample = loop_sample};
