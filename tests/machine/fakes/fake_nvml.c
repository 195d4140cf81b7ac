/* A tiny libnvidia-ml.so.1 for tests: enough of NVML for pynvml to detect a driver and GPUs.
 * Real NVML signatures (nvml.h); values from the environment (see fake_gpus.h). */
#include "fake_gpus.h"

typedef int nvmlReturn_t;
typedef struct { int index; } *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

static struct { int index; } handles[FAKE_MAX_GPUS];

static nvmlReturn_t init_result(void) { return fake_env_int("FAKE_NVML_FAIL", 0); }

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return init_result(); }
nvmlReturn_t nvmlInit_v2(void) { return init_result(); }
nvmlReturn_t nvmlInit(void) { return init_result(); }
nvmlReturn_t nvmlShutdown(void) { return 0; }

const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case 9: return "Driver Not Loaded";
    case 18: return "Driver/library version mismatch";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    const char *v = getenv("FAKE_DRIVER_VERSION");
    snprintf(version, length, "%s", v ? v : "535.104.05");
    return 0;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { *v = fake_env_int("FAKE_CUDA_VERSION", 12020); return 0; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    fake_gpu g[FAKE_MAX_GPUS];
    *count = (unsigned int)fake_gpus(g);
    return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    fake_gpu g[FAKE_MAX_GPUS];
    if ((int)index >= fake_gpus(g)) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    handles[index].index = (int)index;
    *device = (nvmlDevice_t)&handles[index];
    return 0;
}

static fake_gpu *gpu_of(nvmlDevice_t d, fake_gpu *all) {
    int n = fake_gpus(all);
    return d && d->index < n ? &all[d->index] : NULL;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) {
    fake_gpu all[FAKE_MAX_GPUS], *g = gpu_of(d, all);
    if (!g) return 2;
    snprintf(name, length, "%s", g->name);
    return 0;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) {
    unsigned char u[16];
    fake_uuid(d->index, u);
    snprintf(uuid, length, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return 0;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
    fake_gpu all[FAKE_MAX_GPUS], *g = gpu_of(d, all);
    if (!g) return 2;
    *major = g->major;
    *minor = g->minor;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
    fake_gpu all[FAKE_MAX_GPUS], *g = gpu_of(d, all);
    if (!g) return 2;
    m->total = g->mib * 1024ULL * 1024ULL;
    m->free = m->total;
    m->used = 0;
    return 0;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending) {
    fake_gpu all[FAKE_MAX_GPUS], *g = gpu_of(d, all);
    if (!g) return 2;
    if (g->major < 8) return 3; /* NVML_ERROR_NOT_SUPPORTED, as on pre-Ampere GPUs */
    *current = *pending = (unsigned int)g->mig;
    return 0;
}
