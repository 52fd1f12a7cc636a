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
#include <glob.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pjrt_c_api.h>

#include "backend/pjrt/pjrt.h"
#include "core/backend.h"
#include "core/dl.h"
#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"

struct sb_pjrt {
    void *dl;
    const PJRT_Api *api;
    PJRT_Client *client;
    PJRT_Device *const *devs;
    size_t ndev;
    char platform[64], kind[128], path[1024];
    char what[1400]; /* the note every result carries */
    int sheet;       /* the device's datasheet: 0 not looked up, 1 in hw,
                        -1 none */
    sb_hw_spec hw;
};

/* A plugin is first loaded in a child (sb_dl_probe): a damaged object
 * that passes the file checks crashes the child, not the run; the CPU
 * plugin loads there in about a tenth of a second. */
#define SB_PJRT_PROBE_S 60.0

static sb_pjrt g_pjrt;
static int g_rc;
static sb_err g_err;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* One line from a PJRT error (which is destroyed): SB_EUNSUP (a skipped
 * result) when the plugin says UNIMPLEMENTED — an operation this device's
 * compiler or runtime lacks — else SB_EIO. */
static int fail(const PJRT_Api *api, PJRT_Error *e, const char *what,
                sb_err *err)
{
    if (!e)
        return 0;
    PJRT_Error_Message_Args m = {
        .struct_size = PJRT_Error_Message_Args_STRUCT_SIZE, .error = e};
    api->PJRT_Error_Message(&m);
    PJRT_Error_GetCode_Args c = {
        .struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE, .error = e};
    bool unimpl = api->PJRT_Error_GetCode && !api->PJRT_Error_GetCode(&c) &&
                  c.code == PJRT_Error_Code_UNIMPLEMENTED;
    int rc = sb_fail(err, unimpl ? SB_EUNSUP : SB_EIO, "pjrt: %s: %.*s", what,
                     (int)m.message_size, m.message ? m.message : "");
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

/* A plugin installed as a Python package, found without being named:
 * libtpu (TPUs) first, then the JAX CUDA plugins, in a virtual
 * environment, the user's site-packages or the system's. */
static bool discover(char *out, size_t len)
{
    static const char *const pkg[] = {
        "libtpu/libtpu.so", "jax_plugins/xla_cuda13/xla_cuda_plugin.so",
        "jax_plugins/xla_cuda12/xla_cuda_plugin.so"};
    const char *venv = getenv("VIRTUAL_ENV"), *home = getenv("HOME");
    const char *root[4] = {venv, home, "/usr/local", "/usr"};
    const char *mid[4] = {
        "lib/python3*/site-packages", ".local/lib/python3*/site-packages",
        "lib/python3*/dist-packages", "lib/python3*/dist-packages"};
    for (size_t k = 0; k < sizeof pkg / sizeof pkg[0]; k++)
        for (int r = 0; r < 4; r++) {
            if (!root[r] || !*root[r])
                continue;
            char pat[1200];
            snprintf(pat, sizeof pat, "%s/%s/%s", root[r], mid[r], pkg[k]);
            glob_t g;
            if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
                snprintf(out, len, "%s", g.gl_pathv[g.gl_pathc - 1]);
                globfree(&g);
                return true;
            }
            globfree(&g);
        }
    return false;
}

static void open_once(void)
{
    sb_pjrt *p = &g_pjrt;
    sb_err *err = &g_err;
    const char *path = getenv("SOLBENCH_PJRT_PLUGIN");
    /* A plugin the user named that does not load is bad input (exit 2,
     * before anything is measured); one found by discovery or the build's
     * default is a skip with its reason. */
    const bool named = path && *path;
    const int bad = named ? SB_EINVAL : SB_EUNSUP;
    static char found[1024];
    if ((!path || !*path) && discover(found, sizeof found))
        path = found;
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
    /* a FIFO would block dlopen, a truncated object crash it */
    sb_err cerr = {0};
    if (sb_plugin_check(path, &cerr) ||
        sb_dl_probe(path, "GetPjrtApi", SB_PJRT_PROBE_S, &cerr)) {
        g_rc = sb_fail(err, bad, "PJRT plugin %s", cerr.msg);
        return;
    }
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        const char *why = dlerror();
        g_rc = sb_fail(err, bad, "PJRT plugin %s does not load: %s", path,
                       why ? why : "?");
        return;
    }
    const PJRT_Api *(*get)(void) =
        (const PJRT_Api *(*)(void))dlsym(p->dl, "GetPjrtApi");
    if (!get || !(p->api = get())) {
        g_rc =
            sb_fail(err, bad, "%s is not a PJRT plugin (no GetPjrtApi)", path);
        return;
    }
    const PJRT_Api *api = p->api;
    if (api->pjrt_api_version.major_version != PJRT_API_MAJOR) {
        g_rc = sb_fail(err, bad,
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

/* A plugin attribute's string value into out ("" when absent). */
static void attribute(const PJRT_Api *api, const char *name, char *out,
                      size_t len)
{
    out[0] = '\0';
    if (!api->PJRT_Plugin_Attributes)
        return;
    PJRT_Plugin_Attributes_Args a = {
        .struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE};
    sb_err ignored = {0};
    if (fail(api, api->PJRT_Plugin_Attributes(&a), "PJRT_Plugin_Attributes",
             &ignored))
        return;
    for (size_t i = 0; i < a.num_attributes; i++) {
        const PJRT_NamedValue *v = &a.attributes[i];
        if (v->name_size != strlen(name) ||
            strncmp(v->name, name, v->name_size) != 0)
            continue;
        if (v->type == PJRT_NamedValue_kString)
            snprintf(out, len, "%.*s", (int)v->value_size, v->string_value);
        else if (v->type == PJRT_NamedValue_kInt64)
            snprintf(out, len, "%lld", (long long)v->int64_value);
        else if (v->type == PJRT_NamedValue_kInt64List) {
            size_t o = 0;
            for (size_t k = 0; k < v->value_size && o + 1 < len; k++)
                o += (size_t)snprintf(out + o, len - o, "%s%lld", k ? "." : "",
                                      (long long)v->int64_array_value[k]);
        }
    }
}

int sb_pjrt_info_get(sb_pjrt_info *out)
{
    memset(out, 0, sizeof *out);
    sb_pjrt *p = NULL;
    sb_err err = {0};
    if (sb_pjrt_open(&p, &err)) {
        snprintf(out->error, sizeof out->error, "%s", err.msg);
        return -1;
    }
    const PJRT_Api *api = p->api;
    snprintf(out->platform, sizeof out->platform, "%s", p->platform);
    snprintf(out->device_kind, sizeof out->device_kind, "%s", p->kind);
    snprintf(out->plugin, sizeof out->plugin, "%s", p->path);
    out->devices = (int)p->ndev;
    out->api_major = api->pjrt_api_version.major_version;
    out->api_minor = api->pjrt_api_version.minor_version;
    PJRT_Client_PlatformVersion_Args v = {
        .struct_size = PJRT_Client_PlatformVersion_Args_STRUCT_SIZE,
        .client = p->client};
    if (!fail(api, api->PJRT_Client_PlatformVersion(&v),
              "PJRT_Client_PlatformVersion", &err))
        snprintf(out->platform_version, sizeof out->platform_version, "%.*s",
                 (int)v.platform_version_size, v.platform_version);
    attribute(api, "xla_version", out->xla_version, sizeof out->xla_version);
    attribute(api, "stablehlo_current_version", out->stablehlo_version,
              sizeof out->stablehlo_version);
    /* allocatable memory, where the plugin keeps the statistic (TPU and
     * GPU plugins; the CPU plugin's devices use the host's) */
    if (api->PJRT_Device_MemoryStats) {
        PJRT_Device_MemoryStats_Args m = {
            .struct_size = PJRT_Device_MemoryStats_Args_STRUCT_SIZE,
            .device = p->devs[0]};
        if (!fail(api, api->PJRT_Device_MemoryStats(&m),
                  "PJRT_Device_MemoryStats", &err) &&
            m.bytes_limit_is_set)
            out->device_mem_bytes = (double)m.bytes_limit;
    }
    return 0;
}

const char *sb_pjrt_platform(const sb_pjrt *p)
{
    return p->platform;
}
const char *sb_pjrt_device_kind(const sb_pjrt *p)
{
    return p->kind;
}

bool sb_pjrt_datasheet(sb_pjrt *p, const sb_hw_spec **hw)
{
    if (p->sheet == 0) { /* read once a process, not once a result */
        const char *name = sb_hw_spec_for_device(p->kind);
        sb_err ignored = {0};
        p->sheet = name && sb_hw_load(name, &p->hw, &ignored) == 0 ? 1 : -1;
    }
    *hw = &p->hw;
    return p->sheet > 0;
}

const char *sb_pjrt_describe(const sb_pjrt *p)
{
    return p->what;
}

static PJRT_Buffer_Type type_of(sb_pjrt_type t)
{
    return t == SB_PJRT_BF16     ? PJRT_Buffer_Type_BF16
           : t == SB_PJRT_S32    ? PJRT_Buffer_Type_S32
           : t == SB_PJRT_F8E4M3 ? PJRT_Buffer_Type_F8E4M3FN
                                 : PJRT_Buffer_Type_F32;
}

int sb_pjrt_ndev(const sb_pjrt *p)
{
    return p->ndev < SB_PJRT_MAXDEV ? (int)p->ndev : SB_PJRT_MAXDEV;
}

/* OnReady: the time an event fired, written to its stamp. */
static void stamp_ready(PJRT_Error *e, void *arg)
{
    sb_pjrt_stamp *at = arg;
    if (e) {
        PJRT_Error_Destroy_Args d = {
            .struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE, .error = e};
        g_pjrt.api->PJRT_Error_Destroy(&d);
    }
    at->t = sb_now();
    __atomic_store_n(&at->set, 1, __ATOMIC_RELEASE);
    /* the last touch of *at: after it the memory may go */
    __atomic_store_n(&at->armed, 0, __ATOMIC_RELEASE);
}

void sb_pjrt_stamp_settle(sb_pjrt_stamp *at)
{
    const double until = sb_now() + 10.0;
    while (__atomic_load_n(&at->armed, __ATOMIC_ACQUIRE) && sb_now() < until)
        sched_yield();
}

int sb_pjrt_stamp_last(sb_pjrt *p, sb_pjrt_pending *w, sb_pjrt_stamp *at,
                       sb_err *err)
{
    if (w->n == 0)
        return sb_fail(err, SB_EINVAL, "pjrt: no event to stamp");
    sb_pjrt_stamp_settle(at); /* an earlier callback done with it */
    at->set = 0;
    __atomic_store_n(&at->armed, 1, __ATOMIC_RELEASE);
    PJRT_Event_OnReady_Args a = {.struct_size =
                                     PJRT_Event_OnReady_Args_STRUCT_SIZE,
                                 .event = (PJRT_Event *)w->ev[w->n - 1],
                                 .callback = stamp_ready,
                                 .user_arg = at};
    int rc =
        fail(p->api, p->api->PJRT_Event_OnReady(&a), "PJRT_Event_OnReady", err);
    if (rc)
        __atomic_store_n(&at->armed, 0, __ATOMIC_RELEASE);
    return rc;
}

double sb_pjrt_stamp_get(const sb_pjrt_stamp *at)
{
    /* the callback may run just after the event's awaiter wakes, on a
     * thread that a loaded machine has not scheduled yet */
    const double until = sb_now() + 1.0;
    while (!__atomic_load_n(&at->set, __ATOMIC_ACQUIRE)) {
        if (sb_now() > until)
            return -1;
        sched_yield();
    }
    return at->t;
}

/* Awaits and destroys every event of w, the first error kept. */
int sb_pjrt_wait(sb_pjrt *p, sb_pjrt_pending *w, sb_err *err)
{
    int rc = 0;
    for (int i = 0; i < w->n; i++) {
        sb_err e2 = {0};
        int r2 = await_event(p->api, (PJRT_Event *)w->ev[i], w->what[i], &e2);
        if (r2 && !rc) {
            rc = r2;
            if (err)
                *err = e2;
        }
        w->ev[i] = NULL;
    }
    w->n = 0;
    return rc;
}

static void pending_add(sb_pjrt_pending *w, PJRT_Event *ev, const char *what)
{
    if (ev && w->n < SB_PJRT_MAXPENDING) {
        w->what[w->n] = what;
        w->ev[w->n++] = ev;
    }
}

int sb_pjrt_upload_begin(sb_pjrt *p, int dev, const void *data,
                         sb_pjrt_type type, const int64_t *dims, int ndims,
                         sb_pjrt_buf **out, sb_pjrt_pending *w, sb_err *err)
{
    const PJRT_Api *api = p->api;
    if (dev < 0 || dev >= sb_pjrt_ndev(p))
        return sb_fail(err, SB_EINVAL,
                       "pjrt: no device %d (the client has %zu)", dev, p->ndev);
    if (w->n + 2 > SB_PJRT_MAXPENDING)
        return sb_fail(err, SB_EINVAL, "pjrt: too many pending events");
    PJRT_Client_BufferFromHostBuffer_Args a = {
        .struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE,
        .client = p->client,
        .data = data,
        .type = type_of(type),
        .dims = dims,
        .num_dims = (size_t)ndims,
        .host_buffer_semantics =
            PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
        .device = p->devs[dev]};
    int rc = fail(api, api->PJRT_Client_BufferFromHostBuffer(&a),
                  "PJRT_Client_BufferFromHostBuffer", err);
    if (rc)
        return rc;
    /* the host data may be reused once the transfer says so, and the
     * buffer is on the device when its ready event fires */
    PJRT_Buffer_ReadyEvent_Args ra = {
        .struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE,
        .buffer = a.buffer};
    pending_add(w, a.done_with_host_buffer, "the upload");
    if ((rc = fail(api, api->PJRT_Buffer_ReadyEvent(&ra),
                   "PJRT_Buffer_ReadyEvent", err))) {
        sb_pjrt_wait(p, w, NULL);
        sb_pjrt_buf_free(p, (sb_pjrt_buf *)a.buffer);
        return rc;
    }
    pending_add(w, ra.event, "the uploaded buffer");
    *out = (sb_pjrt_buf *)a.buffer;
    return 0;
}

int sb_pjrt_upload_to(sb_pjrt *p, int dev, const void *data, sb_pjrt_type type,
                      const int64_t *dims, int ndims, sb_pjrt_buf **out,
                      sb_err *err)
{
    sb_pjrt_pending w = {0};
    sb_pjrt_buf *b = NULL;
    int rc = sb_pjrt_upload_begin(p, dev, data, type, dims, ndims, &b, &w, err);
    if (rc)
        return rc;
    if ((rc = sb_pjrt_wait(p, &w, err))) {
        sb_pjrt_buf_free(p, b);
        return rc;
    }
    *out = b;
    return 0;
}

int sb_pjrt_upload(sb_pjrt *p, const void *data, sb_pjrt_type type,
                   const int64_t *dims, int ndims, sb_pjrt_buf **out,
                   sb_err *err)
{
    return sb_pjrt_upload_to(p, 0, data, type, dims, ndims, out, err);
}

int sb_pjrt_download_begin(sb_pjrt *p, sb_pjrt_buf *b, void *dst, size_t bytes,
                           sb_pjrt_pending *w, sb_err *err)
{
    const PJRT_Api *api = p->api;
    if (w->n + 1 > SB_PJRT_MAXPENDING)
        return sb_fail(err, SB_EINVAL, "pjrt: too many pending events");
    PJRT_Buffer_ToHostBuffer_Args a = {
        .struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE,
        .src = (PJRT_Buffer *)b,
        .dst = dst,
        .dst_size = bytes};
    int rc = fail(api, api->PJRT_Buffer_ToHostBuffer(&a),
                  "PJRT_Buffer_ToHostBuffer", err);
    if (rc)
        return rc;
    pending_add(w, a.event, "the download");
    return 0;
}

int sb_pjrt_download(sb_pjrt *p, sb_pjrt_buf *b, void *dst, size_t bytes,
                     sb_err *err)
{
    sb_pjrt_pending w = {0};
    int rc = sb_pjrt_download_begin(p, b, dst, bytes, &w, err);
    return rc ? rc : sb_pjrt_wait(p, &w, err);
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

/* The devices a compiled program runs on, as indices into the client's
 * addressable devices, in the order Execute takes their arguments. */
static int exe_devices(sb_pjrt *p, PJRT_LoadedExecutable *e, int nrep, int *dev,
                       sb_err *err)
{
    const PJRT_Api *api = p->api;
    PJRT_LoadedExecutable_AddressableDevices_Args a = {
        .struct_size =
            PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE,
        .executable = e};
    int rc = fail(api, api->PJRT_LoadedExecutable_AddressableDevices(&a),
                  "PJRT_LoadedExecutable_AddressableDevices", err);
    if (rc)
        return rc;
    if (a.num_addressable_devices != (size_t)nrep)
        return sb_fail(err, SB_EUNSUP,
                       "pjrt: a program of %d replicas runs on %zu devices "
                       "of this process",
                       nrep, a.num_addressable_devices);
    for (int r = 0; r < nrep; r++) {
        dev[r] = -1;
        for (size_t d = 0; d < p->ndev; d++)
            if (p->devs[d] == a.addressable_devices[r])
                dev[r] = (int)d;
        if (dev[r] < 0)
            return sb_fail(err, SB_EIO,
                           "pjrt: replica %d runs on a device the client "
                           "does not list",
                           r);
    }
    return 0;
}

static int compile_v(sb_pjrt *p, int nrep, int *dev, sb_pjrt_exe **out,
                     sb_err *err, const char *fmt, va_list ap)
{
    char mlir[16384];
    int len = vsnprintf(mlir, sizeof mlir, fmt, ap);
    if (len < 0 || len >= (int)sizeof mlir)
        return sb_fail(err, SB_EINVAL, "pjrt: the program does not fit");
    if (nrep < 1 || nrep > SB_PJRT_MAXDEV)
        return sb_fail(err, SB_EINVAL, "pjrt: %d replicas", nrep);
    /* xla.CompileOptionsProto: executable_build_options (field 3, a
     * message) holding num_replicas (field 4) and num_partitions = 1
     * (field 5), varints; one replica encodes as 1A 04 20 01 28 01. No
     * device assignment: the client's default places replica r. */
    unsigned char opts[16];
    size_t o = 2;
    opts[o++] = 0x20;
    for (unsigned v = (unsigned)nrep;; v >>= 7) {
        opts[o++] = (unsigned char)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        if (v <= 0x7F)
            break;
    }
    opts[o++] = 0x28;
    opts[o++] = 0x01;
    opts[0] = 0x1A;
    opts[1] = (unsigned char)(o - 2);
    const PJRT_Api *api = p->api;
    PJRT_Program prog = {.struct_size = PJRT_Program_STRUCT_SIZE,
                         .code = mlir,
                         .code_size = (size_t)len,
                         .format = "mlir",
                         .format_size = 4};
    PJRT_Client_Compile_Args a = {.struct_size =
                                      PJRT_Client_Compile_Args_STRUCT_SIZE,
                                  .client = p->client,
                                  .program = &prog,
                                  .compile_options = (const char *)opts,
                                  .compile_options_size = o};
    int rc =
        fail(api, api->PJRT_Client_Compile(&a), "PJRT_Client_Compile", err);
    if (rc)
        return rc;
    if (dev && (rc = exe_devices(p, a.executable, nrep, dev, err))) {
        sb_pjrt_exe_free(p, (sb_pjrt_exe *)a.executable);
        return rc;
    }
    *out = (sb_pjrt_exe *)a.executable;
    return 0;
}

int sb_pjrt_compile(sb_pjrt *p, sb_pjrt_exe **out, sb_err *err, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = compile_v(p, 1, NULL, out, err, fmt, ap);
    va_end(ap);
    return rc;
}

int sb_pjrt_compile_replicated(sb_pjrt *p, int nrep, int *dev,
                               sb_pjrt_exe **out, sb_err *err, const char *fmt,
                               ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = compile_v(p, nrep, dev, out, err, fmt, ap);
    va_end(ap);
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

int sb_pjrt_execute(sb_pjrt *p, sb_pjrt_exe *e, int ndev,
                    sb_pjrt_buf *const *args, int nargs, sb_pjrt_buf **outs,
                    sb_err *err)
{
    const PJRT_Api *api = p->api;
    if (ndev < 1 || ndev > SB_PJRT_MAXDEV)
        return sb_fail(err, SB_EINVAL, "pjrt: a launch on %d devices", ndev);
    PJRT_ExecuteOptions opts = {.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE};
    PJRT_Buffer *const *lists[SB_PJRT_MAXDEV];
    PJRT_Buffer *res[SB_PJRT_MAXDEV] = {NULL};
    PJRT_Buffer **out_lists[SB_PJRT_MAXDEV];
    PJRT_Event *done[SB_PJRT_MAXDEV] = {NULL};
    for (int d = 0; d < ndev; d++) {
        lists[d] = (PJRT_Buffer *const *)args + (size_t)d * (size_t)nargs;
        out_lists[d] = &res[d];
    }
    PJRT_LoadedExecutable_Execute_Args a = {
        .struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE,
        .executable = (PJRT_LoadedExecutable *)e,
        .options = &opts,
        .argument_lists = lists,
        .num_devices = (size_t)ndev,
        .num_args = (size_t)nargs,
        .output_lists = out_lists,
        .device_complete_events = done};
    int rc = fail(api, api->PJRT_LoadedExecutable_Execute(&a),
                  "PJRT_LoadedExecutable_Execute", err);
    if (rc)
        return rc;
    /* every event is awaited and destroyed, the first error kept */
    for (int d = 0; d < ndev; d++) {
        sb_err e2 = {0};
        int r2 = await_event(api, done[d], "the execution", &e2);
        if (r2 && !rc) {
            rc = r2;
            if (err)
                *err = e2;
        }
    }
    for (int d = 0; d < ndev; d++) {
        if (rc)
            sb_pjrt_buf_free(p, (sb_pjrt_buf *)res[d]);
        else
            outs[d] = (sb_pjrt_buf *)res[d];
    }
    return rc;
}

static int loop_ndev(const sb_pjrt_loop *l)
{
    return l->ndev > 1 ? l->ndev : 1;
}

int sb_pjrt_loop_count(sb_pjrt_loop *l, uint64_t n, sb_err *err)
{
    sb_pjrt_count *c = &l->count;
    if (c->buf[0] && c->n == n)
        return 0;
    if (n > 2147483647u)
        return sb_fail(err, SB_EINVAL, "pjrt: a loop of %llu iterations",
                       (unsigned long long)n);
    for (int d = 0; d < SB_PJRT_MAXDEV; d++) {
        sb_pjrt_buf_free(l->p, c->buf[d]);
        c->buf[d] = NULL;
    }
    c->n = 0;
    int32_t v = (int32_t)n;
    for (int d = 0; d < loop_ndev(l); d++) {
        int rc = sb_pjrt_upload_to(l->p, l->ndev > 1 ? l->dev[d] : 0, &v,
                                   SB_PJRT_S32, NULL, 0, &c->buf[d], err);
        if (rc)
            return rc;
    }
    c->n = n;
    return 0;
}

int sb_pjrt_loop_run(sb_pjrt_loop *l, uint64_t n, sb_pjrt_buf **outs,
                     sb_err *err)
{
    int rc = sb_pjrt_loop_count(l, n, err);
    if (rc)
        return rc;
    const int nd = loop_ndev(l);
    if (l->nargs < 1 || l->nargs > 8)
        return sb_fail(err, SB_EINVAL, "pjrt: a loop of %d arguments",
                       l->nargs);
    sb_pjrt_buf *args[SB_PJRT_MAXDEV * 8];
    for (int d = 0; d < nd; d++) {
        for (int i = 0; i < l->nargs - 1; i++)
            args[d * l->nargs + i] = l->args[d][i];
        args[d * l->nargs + l->nargs - 1] = l->count.buf[d];
    }
    return sb_pjrt_execute(l->p, l->exe, nd, args, l->nargs, outs, err);
}

int sb_pjrt_state_new(size_t size, void **out, sb_err *err)
{
    *out = NULL;
    sb_pjrt *p = NULL;
    int rc = sb_pjrt_open(&p, err);
    if (rc)
        return rc;
    sb_pjrt_loop *l = calloc(1, size);
    if (!l)
        return sb_fail(err, SB_ENOMEM, "pjrt: out of memory");
    l->p = p;
    *out = l;
    return 0;
}

int sb_pjrt_loop_fetch(sb_pjrt_loop *l, uint64_t n, void *dst, size_t bytes,
                       sb_err *err)
{
    sb_pjrt_buf *out = NULL;
    int rc = sb_pjrt_loop_run(l, n, &out, err);
    if (rc == 0)
        rc = sb_pjrt_download(l->p, out, dst, bytes, err);
    sb_pjrt_buf_free(l->p, out);
    return rc;
}

void sb_pjrt_loop_free(sb_pjrt_loop *l)
{
    if (!l->p)
        return;
    for (int d = 0; d < SB_PJRT_MAXDEV; d++) {
        sb_pjrt_buf_free(l->p, l->count.buf[d]);
        l->count.buf[d] = NULL;
    }
    sb_pjrt_exe_free(l->p, l->exe);
    l->exe = NULL;
}

static int loop_sample(void *state, int idx, uint64_t iters, double *secs,
                       sb_err *err)
{
    (void)idx;
    sb_pjrt_loop *l = state;
    sb_pjrt_buf *outs[SB_PJRT_MAXDEV] = {NULL};
    /* a new count's upload stays out of the timed launch */
    int rc = sb_pjrt_loop_count(l, iters, err);
    if (rc)
        return rc;
    double t0 = sb_now();
    rc = sb_pjrt_loop_run(l, iters, outs, err);
    *secs = sb_now() - t0;
    for (int d = 0; d < loop_ndev(l); d++)
        sb_pjrt_buf_free(l->p, outs[d]);
    return rc;
}

static double loop_work(void *state)
{
    const sb_pjrt_loop *l = state;
    return l->work > 0 ? l->work : 1.0;
}

const sb_timer sb_pjrt_timer = {
    .min_sample_s = 100e-3, .sample = loop_sample, .work = loop_work};

/* ---- the backend as the core sees it (core/backend.h) ----------------------
 */

/* A plan that names no backend loads a plugin only when one is named. */
static bool pjrt_wanted(void)
{
    const char *env = getenv("SOLBENCH_PJRT_PLUGIN");
    return env && *env;
}

static void pjrt_describe(sb_sysinfo *si)
{
    si->has_pjrt = true;
    sb_pjrt_info_get(&si->pjrt);
}

/* Its impls: one line each. */
extern const sb_impl sb_impl_pjrt_attention_bmm,
    sb_impl_pjrt_attention_paged_decode, sb_impl_pjrt_attention_prefill,
    sb_impl_pjrt_compute_gemm, sb_impl_pjrt_memory_add,
    sb_impl_pjrt_memory_copy, sb_impl_pjrt_memory_read,
    sb_impl_pjrt_memory_scale, sb_impl_pjrt_memory_triad,
    sb_impl_pjrt_moe_combine, sb_impl_pjrt_moe_dispatch,
    sb_impl_pjrt_moe_grouped_gemm, sb_impl_pjrt_moe_route,
    sb_impl_pjrt_network_allgather, sb_impl_pjrt_network_allreduce,
    sb_impl_pjrt_network_alltoall, sb_impl_pjrt_network_bcast,
    sb_impl_pjrt_network_reduce_scatter, sb_impl_pjrt_network_sendrecv,
    sb_impl_pjrt_transfer_bidir, sb_impl_pjrt_transfer_d2h,
    sb_impl_pjrt_transfer_h2d;
static const sb_impl_entry pjrt_impls[] = {
    {"attention.bmm", &sb_impl_pjrt_attention_bmm},
    {"attention.paged_decode", &sb_impl_pjrt_attention_paged_decode},
    {"attention.prefill", &sb_impl_pjrt_attention_prefill},
    {"compute.gemm", &sb_impl_pjrt_compute_gemm},
    {"memory.add", &sb_impl_pjrt_memory_add},
    {"memory.copy", &sb_impl_pjrt_memory_copy},
    {"memory.read", &sb_impl_pjrt_memory_read},
    {"memory.scale", &sb_impl_pjrt_memory_scale},
    {"memory.triad", &sb_impl_pjrt_memory_triad},
    {"moe.combine", &sb_impl_pjrt_moe_combine},
    {"moe.dispatch", &sb_impl_pjrt_moe_dispatch},
    {"moe.grouped_gemm", &sb_impl_pjrt_moe_grouped_gemm},
    {"moe.route", &sb_impl_pjrt_moe_route},
    {"network.allgather", &sb_impl_pjrt_network_allgather},
    {"network.allreduce", &sb_impl_pjrt_network_allreduce},
    {"network.alltoall", &sb_impl_pjrt_network_alltoall},
    {"network.bcast", &sb_impl_pjrt_network_bcast},
    {"network.reduce_scatter", &sb_impl_pjrt_network_reduce_scatter},
    {"network.sendrecv", &sb_impl_pjrt_network_sendrecv},
    {"transfer.bidir", &sb_impl_pjrt_transfer_bidir},
    {"transfer.d2h", &sb_impl_pjrt_transfer_d2h},
    {"transfer.h2d", &sb_impl_pjrt_transfer_h2d},
    {NULL, NULL}};

const sb_backend sb_backend_pjrt = {
    .name = "pjrt",
    .what = "XLA devices through a PJRT plugin (TPU, GPU, the CPU plugin)",
    .phase = 2,
    .caps = SB_BK_SELECT | SB_BK_ON_REQUEST,
    .wanted = pjrt_wanted,
    .describe = pjrt_describe,
    .impls = pjrt_impls,
};
