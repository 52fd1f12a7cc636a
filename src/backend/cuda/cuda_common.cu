/*
 * cuda_common.cu — what every CUDA benchmark shares: opening a device (or
 * the driver's reason there is none), the stream and events of a state,
 * the event-timed measurement loop, and the accelerator part of the
 * machine fingerprint (sb_cuda_devices_json, the devices_json of the
 * backend's descriptor, backend_cuda.c).
 *
 * Timing: a sample is a batch of launches between two CUDA events on one
 * stream, divided by the number of launches. The batch is captured once
 * into a CUDA graph and replayed, so for kernels of a few microseconds the
 * gaps between launches are not what is measured (METHOD: "for many small
 * launches, capture a graph and time its replays"). The batch is sized so
 * a sample lasts at least 2 ms, far above the events' ~0.5 us resolution.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "backend/cuda/cuda_common.h"
#include "backend/cuda/cuda_table.h"

extern "C" {
#include <jansson.h>

#include "solbench/device.h"
#include "solbench/runner.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"
}

/* One sample lasts at least this long (seconds). */
#define SB__CUDA_SAMPLE_S 2e-3
/* Launches per sample never exceed this (graph nodes). */
#define SB__CUDA_MAX_ITERS 4096

extern "C" int sb_cuda_fail(sb_err *err, cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    return sb_fail(err, SB_EIO, "%s: %s (%s)", what, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

extern "C" int sb_cuda_count(int *n, sb_err *err)
{
    *n = 0;
    cudaError_t e = cudaGetDeviceCount(n);
    if (e != cudaSuccess) {
        *n = 0;
        cudaGetLastError(); /* clear it: later calls must not inherit it */
        return sb_fail(err, SB_EUNSUP, "no CUDA device (%s)",
                       cudaGetErrorString(e));
    }
    if (*n == 0)
        return sb_fail(err, SB_EUNSUP,
                       "no CUDA device (the driver reports none)");
    return 0;
}

extern "C" int sb_cuda_device_count(void)
{
    int n = 0;
    sb_err err = {};
    return sb_cuda_count(&n, &err) ? 0 : n;
}

extern "C" int sb_cuda_open(int device, sb_err *err)
{
    int n = 0;
    int rc = sb_cuda_count(&n, err);
    if (rc)
        return rc;
    if (device < 0 || device >= n)
        return sb_fail(err, SB_EINVAL,
                       "parameter device=%d: there are %d CUDA devices", device,
                       n);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return sb_fail(err, SB_EUNSUP, "no usable CUDA device (%s)",
                       cudaGetErrorString(e));
    return 0;
}

extern "C" int sb_cuda_base_init(sb_cuda_base *b, int device,
                                 sb_cuda_enqueue_fn fn, bool use_graph,
                                 sb_err *err)
{
    int rc = sb_cuda_open(device, err);
    if (rc)
        return rc;
    b->device = device;
    b->enqueue = fn;
    b->use_graph = use_graph;
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess)
        return sb_cuda_fail(err, e, "cudaGetDeviceProperties");
    snprintf(b->devname, sizeof b->devname, "%s", prop.name);
    b->cc = prop.major * 10 + prop.minor;
    b->sms = prop.multiProcessorCount;
    b->l2_bytes = (double)prop.l2CacheSize;
    if ((e = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)))
        return sb_cuda_fail(err, e, "cudaStreamCreate");
    if ((e = cudaEventCreate(&b->ev[0])) || (e = cudaEventCreate(&b->ev[1])))
        return sb_cuda_fail(err, e, "cudaEventCreate");
    return 0;
}

extern "C" void sb_cuda_base_free(sb_cuda_base *b)
{
    if (b->graph)
        cudaGraphExecDestroy((cudaGraphExec_t)b->graph);
    b->graph = NULL;
    if (b->ev[0])
        cudaEventDestroy(b->ev[0]);
    if (b->ev[1])
        cudaEventDestroy(b->ev[1]);
    if (b->stream)
        cudaStreamDestroy(b->stream);
    b->ev[0] = b->ev[1] = NULL;
    b->stream = NULL;
}

extern "C" int sb_cuda_sync(sb_cuda_base *b, sb_err *err, const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(b->stream);
    return sb_cuda_fail(err, e, what);
}

extern "C" int sb_cuda_uploads_done(sb_err *err)
{
    return sb_cuda_fail(err, cudaDeviceSynchronize(), "finishing the uploads");
}

/* ---- the gate ------------------------------------------------------------ */

__global__ void k_gate(volatile int *flag, long long cycles)
{
    long long t0 = clock64();
    while (*flag == 0 && clock64() - t0 < cycles)
        ;
}

extern "C" bool sb_cuda_gate_open(sb_cuda_gate *g)
{
    memset(g, 0, sizeof *g);
    void *f = NULL;
    if (cudaHostAlloc(&f, sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    if (cudaHostGetDevicePointer((void **)&g->dflag, f, 0) != cudaSuccess) {
        cudaGetLastError();
        cudaFreeHost(f);
        g->dflag = NULL;
        return false;
    }
    g->flag = (volatile int *)f;
    *g->flag = 1;
    return true;
}

extern "C" void sb_cuda_gate_close(sb_cuda_gate *g)
{
    if (g->flag)
        cudaFreeHost((void *)g->flag);
    memset(g, 0, sizeof *g);
}

extern "C" int sb_cuda_gate_hold(sb_cuda_gate *g, cudaStream_t st)
{
    if (!g->flag)
        return 0;
    *g->flag = 0;
    k_gate<<<1, 1, 0, st>>>(g->dflag, 4000000000LL);
    cudaError_t e = cudaGetLastError();
    if (e)
        *g->flag = 1;
    return (int)e;
}

extern "C" void sb_cuda_gate_release(sb_cuda_gate *g)
{
    if (g->flag)
        __atomic_store_n(g->flag, 1, __ATOMIC_SEQ_CST);
}

extern "C" int sb_cuda_put(sb_cuda_base *b, void *dst, const void *src,
                           size_t bytes, sb_err *err, const char *what)
{
    cudaError_t e =
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, b->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(b->stream);
    return sb_cuda_fail(err, e, what);
}

/* ---- measurement --------------------------------------------------------- */

static void watch_poll(sb_cuda_base *b, bool first);

/* One batch: an executable graph of `iters` launches, or direct launches
 * when exec is NULL. Returns the events' elapsed seconds in *t. `watch`
 * (1: a result's first sample, 2: a later one, 0: none) reads the
 * device's clocks, power and throttle reasons while the batch runs
 * (host-side reads: the events do not see them). */
static int time_batch(sb_cuda_base *b, cudaGraphExec_t exec, int iters,
                      double *t, sb_err *err, int watch)
{
    cudaError_t e;
    if ((e = cudaEventRecord(b->ev[0], b->stream)))
        return sb_cuda_fail(err, e, "cudaEventRecord");
    if (exec) {
        if ((e = cudaGraphLaunch(exec, b->stream)))
            return sb_cuda_fail(err, e, "cudaGraphLaunch");
    } else {
        int rc = b->enqueue(b, iters, err);
        if (rc)
            return rc;
    }
    if ((e = cudaEventRecord(b->ev[1], b->stream)))
        return sb_cuda_fail(err, e, "cudaEventRecord");
    if (watch)
        watch_poll(b, watch == 1);
    if ((e = cudaEventSynchronize(b->ev[1])))
        return sb_cuda_fail(err, e, "waiting for the timed kernels");
    if ((e = cudaGetLastError()))
        return sb_cuda_fail(err, e, "the timed kernels");
    float ms = 0;
    if ((e = cudaEventElapsedTime(&ms, b->ev[0], b->ev[1])))
        return sb_cuda_fail(err, e, "cudaEventElapsedTime");
    *t = 1e-3 * (double)ms;
    return 0;
}

/* Captures `iters` launches into an executable graph; NULL (and no error)
 * when this stream's work cannot be captured, so the caller falls back to
 * direct launches. */
static int capture(sb_cuda_base *b, int iters, cudaGraphExec_t *exec,
                   sb_err *err)
{
    *exec = NULL;
    cudaGraph_t g = NULL;
    cudaError_t e =
        cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    sb_err cerr = {};
    int rc = b->enqueue(b, iters, &cerr);
    e = cudaStreamEndCapture(b->stream, &g);
    if (rc || e != cudaSuccess || !g) {
        if (g)
            cudaGraphDestroy(g);
        cudaGetLastError();
        return 0;
    }
    e = cudaGraphInstantiate(exec, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) {
        *exec = NULL;
        cudaGetLastError();
    }
    (void)err;
    return 0;
}

/* One sample of `iters` launches: replayed from a graph of that many
 * launches (captured again when the count changes), or launched directly
 * where the stream's work cannot be captured. */
static int cuda_sample(void *state, int idx, uint64_t iters, double *secs,
                       sb_err *err)
{
    sb_cuda_base *b = (sb_cuda_base *)state;
    const int n = (int)iters;
    if (!b->launched) {
        /* One direct launch first: it loads the module (lazy loading) and
         * warms the clocks before any capture. */
        double t = 0;
        int rc = time_batch(b, NULL, 1, &t, err, 0);
        if (rc)
            return rc;
        b->launched = true;
    }
    if (b->use_graph && !b->no_graph && b->graph_iters != n) {
        if (b->graph)
            cudaGraphExecDestroy((cudaGraphExec_t)b->graph);
        b->graph = NULL;
        cudaGraphExec_t exec = NULL;
        int rc = capture(b, n, &exec, err);
        if (rc)
            return rc;
        b->graph = exec;
        b->graph_iters = n;
        b->no_graph = exec == NULL;
    }
    /* the device's clocks, power and throttle reasons read while each
     * timed sample runs */
    int rc = time_batch(b, (cudaGraphExec_t)b->graph, n, secs, err,
                        idx < 0    ? 0
                        : idx == 0 ? 1
                                   : 2);
    if (rc == 0 && idx == 0) {
        b->iters = n;
        snprintf(b->how, sizeof b->how,
                 "%s of %d launches%s timed with CUDA "
                 "events",
                 b->graph ? "graph replay" : "batch", n,
                 b->passes > 1 ? " of several passes each," : "");
    }
    return rc;
}

static double cuda_work(void *state)
{
    const sb_cuda_base *b = (const sb_cuda_base *)state;
    return b->passes > 1 ? b->passes : 1;
}

extern "C" const sb_timer sb_cuda_timer = {
    SB__CUDA_SAMPLE_S, SB__CUDA_MAX_ITERS, NULL, cuda_sample, cuda_work, NULL};

extern "C" void sb_cuda_note(const sb_cuda_base *b, sb_result *r)
{
    sb_result_note(r,
                   "cuda device %d: %s (compute capability %d.%d, %d "
                   "SMs, L2 %.0f MiB)",
                   b->device, b->devname, b->cc / 10, b->cc % 10, b->sms,
                   b->l2_bytes / 1048576.0);
    if (b->how[0])
        sb_result_note(r, "%s", b->how);
    if (b->passes > 1)
        sb_result_metric(r, "passes_per_launch", b->passes, "");
    /* what the device did while sampling: a slow sample is explained by
     * a clock that fell, and the reason NVML gave */
    const sb_cuda_watch *w = &b->watch;
    if (w->polls == 0) {
        if (b->iters > 0)
            sb_result_note(r, "no clocks or power recorded (NVML not "
                              "loaded or not answering)");
        return;
    }
    sb_result_metric(r, "sm_clock_MHz_start", w->sm_start, "MHz");
    sb_result_metric(r, "sm_clock_MHz_end", w->sm_end, "MHz");
    sb_result_metric(r, "sm_clock_MHz_min", w->sm_min, "MHz");
    sb_result_metric(r, "mem_clock_MHz_start", w->mem_start, "MHz");
    sb_result_metric(r, "mem_clock_MHz_end", w->mem_end, "MHz");
    sb_result_metric(r, "power_W_start", w->watts_start, "W");
    sb_result_metric(r, "power_W_end", w->watts_end, "W");
    sb_result_metric(r, "power_W_max", w->watts_max, "W");
    if (w->temp_max > 0)
        sb_result_metric(r, "temp_C_max", w->temp_max, "C");
    char why[160];
    int n = sb_cu_clock_reasons(w->reasons, why, sizeof why);
    sb_result_note(r,
                   "device while sampling (%d NVML reads): SM clock %u -> "
                   "%u MHz (lowest %u), memory clock %u -> %u MHz, power "
                   "%.0f -> %.0f W (highest %.0f); clock held back by: %s",
                   w->polls, w->sm_start, w->sm_end, w->sm_min, w->mem_start,
                   w->mem_end, w->watts_start, w->watts_end, w->watts_max,
                   n ? why : "nothing");
}

/* ---- fingerprint --------------------------------------------------------- */

/* NVML is read through dlopen: it comes with the driver, not the toolkit,
 * so the build needs neither its header nor its library, and a machine
 * without a driver never loads it. */
typedef int (*nvml_void_fn)(void);
typedef int (*nvml_handle_fn)(const char *, void **);
typedef int (*nvml_uint_fn)(void *, unsigned *);
typedef int (*nvml_clock_fn)(void *, int, unsigned *);
typedef int (*nvml_str_fn)(char *, unsigned);
typedef int (*nvml_u64_fn)(void *, unsigned long long *);

typedef struct nvml_api {
    void *lib;
    nvml_void_fn shutdown;
    nvml_handle_fn by_bus;
    nvml_uint_fn gen, width, max_gen, max_width, power_limit, power;
    nvml_clock_fn max_clock, clock, temp;
    nvml_u64_fn reasons;
    nvml_str_fn driver;
} nvml_api;

static bool nvml_open(nvml_api *n)
{
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return false;
    nvml_void_fn init = (nvml_void_fn)dlsym(n->lib, "nvmlInit_v2");
    n->shutdown = (nvml_void_fn)dlsym(n->lib, "nvmlShutdown");
    n->by_bus =
        (nvml_handle_fn)dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    n->gen = (nvml_uint_fn)dlsym(n->lib, "nvmlDeviceGetCurrPcieLinkGeneration");
    n->width = (nvml_uint_fn)dlsym(n->lib, "nvmlDeviceGetCurrPcieLinkWidth");
    n->max_gen =
        (nvml_uint_fn)dlsym(n->lib, "nvmlDeviceGetMaxPcieLinkGeneration");
    n->max_width = (nvml_uint_fn)dlsym(n->lib, "nvmlDeviceGetMaxPcieLinkWidth");
    n->power_limit =
        (nvml_uint_fn)dlsym(n->lib, "nvmlDeviceGetPowerManagementLimit");
    n->max_clock = (nvml_clock_fn)dlsym(n->lib, "nvmlDeviceGetMaxClockInfo");
    n->driver = (nvml_str_fn)dlsym(n->lib, "nvmlSystemGetDriverVersion");
    n->clock = (nvml_clock_fn)dlsym(n->lib, "nvmlDeviceGetClockInfo");
    n->temp = (nvml_clock_fn)dlsym(n->lib, "nvmlDeviceGetTemperature");
    n->power = (nvml_uint_fn)dlsym(n->lib, "nvmlDeviceGetPowerUsage");
    n->reasons =
        (nvml_u64_fn)dlsym(n->lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->reasons) /* its name before driver 535 */
        n->reasons = (nvml_u64_fn)dlsym(
            n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!init || !n->shutdown || !n->by_bus || init() != 0) {
        dlclose(n->lib);
        n->lib = NULL;
        return false;
    }
    return true;
}

static void nvml_close(nvml_api *n)
{
    if (n->lib) {
        n->shutdown();
        dlclose(n->lib);
    }
}

/* ---- the device's state while sampling ------------------------------------
 * NVML opened once a process (on the first poll) and a handle per device
 * looked up once, by PCI bus id. */

enum { WATCH_DEVICES = 64 };
static nvml_api g_nv;
static int g_nv_state; /* 0 not tried, 1 open, -1 unavailable */
static void *g_nv_handle[WATCH_DEVICES];
static bool g_nv_looked[WATCH_DEVICES];

static void *watch_handle(int device)
{
    if (g_nv_state == 0)
        g_nv_state = nvml_open(&g_nv) ? 1 : -1;
    if (g_nv_state < 0 || device < 0 || device >= WATCH_DEVICES)
        return NULL;
    if (!g_nv_looked[device]) {
        g_nv_looked[device] = true;
        char busid[32] = "";
        if (cudaDeviceGetPCIBusId(busid, sizeof busid, device) != cudaSuccess)
            cudaGetLastError();
        else if (g_nv.by_bus(busid, &g_nv_handle[device]) != 0)
            g_nv_handle[device] = NULL;
    }
    return g_nv_handle[device];
}

static void watch_poll(sb_cuda_base *b, bool first)
{
    void *h = watch_handle(b->device);
    if (!h)
        return;
    sb_cuda_watch *w = &b->watch;
    if (first)
        memset(w, 0, sizeof *w);
    unsigned sm = 0, mem = 0, mw = 0, temp = 0;
    unsigned long long why = 0;
    bool have_sm = g_nv.clock && g_nv.clock(h, 1 /* SM */, &sm) == 0;
    bool have_mem = g_nv.clock && g_nv.clock(h, 2 /* MEM */, &mem) == 0;
    bool have_w = g_nv.power && g_nv.power(h, &mw) == 0;
    if (g_nv.temp && g_nv.temp(h, 0 /* GPU */, &temp) != 0)
        temp = 0;
    if (g_nv.reasons && g_nv.reasons(h, &why) != 0)
        why = 0;
    if (!have_sm && !have_mem && !have_w)
        return;
    double watts = mw / 1000.0;
    if (w->polls == 0) {
        w->sm_start = sm;
        w->mem_start = mem;
        w->watts_start = watts;
        w->sm_min = sm;
    }
    w->sm_end = sm;
    w->mem_end = mem;
    w->watts_end = watts;
    if (have_sm && (w->sm_min == 0 || sm < w->sm_min))
        w->sm_min = sm;
    if (watts > w->watts_max)
        w->watts_max = watts;
    if (temp > w->temp_max)
        w->temp_max = temp;
    /* idle is set between launches; it says nothing of the samples */
    w->reasons |= why & ~SB_CU_CLK_IDLE;
    w->polls++;
}

static void set_uint(json_t *o, const char *key, nvml_uint_fn fn, void *h)
{
    unsigned v = 0;
    if (fn && fn(h, &v) == 0)
        json_object_set_new(o, key, json_integer(v));
}

static int attr(enum cudaDeviceAttr a, int dev)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return v;
}

static json_t *device_json(int i, nvml_api *nv, bool have_nvml)
{
    json_t *d = json_object();
    cudaDeviceProp p;
    json_object_set_new(d, "index", json_integer(i));
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
        cudaGetLastError();
        json_object_set_new(d, "error",
                            json_string("cudaGetDeviceProperties failed"));
        return d;
    }
    json_object_set_new(d, "name", json_string(p.name));
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", p.major, p.minor);
    json_object_set_new(d, "compute_capability", json_string(cc));
    json_object_set_new(d, "sm_count", json_integer(p.multiProcessorCount));
    json_object_set_new(d, "memory_bytes",
                        json_integer((json_int_t)p.totalGlobalMem));
    json_object_set_new(d, "l2_bytes", json_integer(p.l2CacheSize));
    int clk = attr(cudaDevAttrClockRate, i);        /* kHz */
    int mclk = attr(cudaDevAttrMemoryClockRate, i); /* kHz */
    int bus = attr(cudaDevAttrGlobalMemoryBusWidth, i);
    json_object_set_new(d, "sm_clock_max_MHz", json_real(clk / 1000.0));
    json_object_set_new(d, "memory_clock_MHz", json_real(mclk / 1000.0));
    json_object_set_new(d, "memory_bus_bits", json_integer(bus));
    /* Double data rate: two transfers per memory clock. */
    json_object_set_new(d, "memory_bw_theoretical_GBps",
                        json_real(2.0 * mclk * 1e3 * bus / 8.0 * 1e-9));
    json_object_set_new(d, "ecc", json_boolean(attr(cudaDevAttrEccEnabled, i)));
    char uuid[64];
    int n = snprintf(uuid, sizeof uuid, "GPU-");
    for (int k = 0; k < 16 && n < (int)sizeof uuid - 3; k++) {
        n += snprintf(uuid + n, sizeof uuid - (size_t)n, "%02x",
                      (unsigned char)p.uuid.bytes[k]);
        if ((k == 3 || k == 5 || k == 7 || k == 9) && n < (int)sizeof uuid - 1)
            uuid[n++] = '-', uuid[n] = 0;
    }
    json_object_set_new(d, "uuid", json_string(uuid));
    char busid[32] = "";
    if (cudaDeviceGetPCIBusId(busid, sizeof busid, i) == cudaSuccess)
        json_object_set_new(d, "pci_bus_id", json_string(busid));
    else
        cudaGetLastError();
    json_t *pcie = json_object();
    if (have_nvml && busid[0]) {
        void *h = NULL;
        if (nv->by_bus(busid, &h) == 0) {
            set_uint(pcie, "link_gen", nv->gen, h);
            set_uint(pcie, "link_width", nv->width, h);
            set_uint(pcie, "link_gen_max", nv->max_gen, h);
            set_uint(pcie, "link_width_max", nv->max_width, h);
            unsigned mw = 0;
            if (nv->power_limit && nv->power_limit(h, &mw) == 0)
                json_object_set_new(d, "power_limit_W", json_real(mw / 1000.0));
            unsigned mhz = 0;
            if (nv->max_clock && nv->max_clock(h, 1 /* SM */, &mhz) == 0)
                json_object_set_new(d, "sm_clock_max_nvml_MHz",
                                    json_integer(mhz));
        }
        json_object_set_new(pcie, "source", json_string("nvml"));
    } else {
        json_object_set_new(pcie, "source",
                            json_string("unavailable (NVML not loaded)"));
    }
    json_object_set_new(d, "pcie", pcie);
    return d;
}

extern "C" json_t *sb_cuda_devices_json(void)
{
    int n = 0;
    sb_err err = {};
    if (sb_cuda_count(&n, &err)) {
        json_t *o = json_object();
        json_object_set_new(o, "error", json_string(err.msg));
        return o;
    }
    nvml_api nv;
    bool have_nvml = nvml_open(&nv);
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    char dbuf[32], rbuf[32], dv[96] = "";
    snprintf(dbuf, sizeof dbuf, "%d.%d", drv / 1000, (drv % 1000) / 10);
    snprintf(rbuf, sizeof rbuf, "%d.%d", rt / 1000, (rt % 1000) / 10);
    if (!(have_nvml && nv.driver && nv.driver(dv, sizeof dv) == 0))
        dv[0] = 0;
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        json_t *d = device_json(i, &nv, have_nvml);
        json_object_set_new(d, "cuda_driver_api", json_string(dbuf));
        json_object_set_new(d, "cuda_runtime", json_string(rbuf));
        json_object_set_new(d, "driver_version",
                            dv[0] ? json_string(dv) : json_null());
        json_array_append_new(arr, d);
    }
    if (have_nvml)
        nvml_close(&nv);
    return arr;
}
