/* Shared by the fake driver libraries: the GPUs and versions they report come from the
 * environment, read at each call so one build serves every test.
 *   FAKE_DRIVER_VERSION=535.104.05   driver string (NVML)
 *   FAKE_CUDA_VERSION=12020          newest CUDA, 1000*major + 10*minor (NVML and libcuda)
 *   FAKE_GPUS="NVIDIA A100-SXM4-80GB:8.0:81920[:mig];NVIDIA T4:7.5:15360"
 *   FAKE_NVML_FAIL=<nvmlReturn_t>    make nvmlInit fail (9 = driver not loaded, 18 = mismatch)
 *   FAKE_CUDA_FAIL=<CUresult>        make cuInit fail (100 = no device)
 */
#ifndef FAKE_GPUS_H
#define FAKE_GPUS_H
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define FAKE_MAX_GPUS 16

typedef struct {
    char name[96];
    int major, minor;
    unsigned long long mib;
    int mig;
} fake_gpu;

static int fake_env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return (v && *v) ? atoi(v) : fallback;
}

static int fake_gpus(fake_gpu *out) {
    const char *spec = getenv("FAKE_GPUS");
    char buf[2048];
    int n = 0;
    if (!spec || !*spec) return 0;
    strncpy(buf, spec, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char *item = strtok(buf, ";"); item && n < FAKE_MAX_GPUS; item = strtok(NULL, ";")) {
        fake_gpu *g = &out[n];
        char *cc = strchr(item, ':');
        memset(g, 0, sizeof *g);
        if (!cc) continue;
        *cc++ = 0;
        strncpy(g->name, item, sizeof g->name - 1);
        char *mem = strchr(cc, ':');
        if (mem) *mem++ = 0;
        sscanf(cc, "%d.%d", &g->major, &g->minor);
        if (mem) {
            char *mig = strchr(mem, ':');
            if (mig) { *mig++ = 0; g->mig = strcmp(mig, "mig") == 0; }
            g->mib = strtoull(mem, NULL, 10);
        }
        n++;
    }
    return n;
}

static void fake_uuid(int index, unsigned char out[16]) {
    for (int i = 0; i < 16; i++) out[i] = (unsigned char)(0x10 * (i % 16) + index);
}
#endif
