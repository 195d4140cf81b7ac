/* A tiny libcuda.so.1 for tests: the driver-API calls cuenv makes through ctypes.
 * Real signatures (cuda.h); values from the environment (see fake_gpus.h). */
#include "fake_gpus.h"

typedef int CUresult;
typedef int CUdevice;

CUresult cuDriverGetVersion(int *v) { *v = fake_env_int("FAKE_CUDA_VERSION", 12020); return 0; }
CUresult cuInit(unsigned int flags) { (void)flags; return fake_env_int("FAKE_CUDA_FAIL", 0); }

CUresult cuDeviceGetCount(int *count) {
    fake_gpu g[FAKE_MAX_GPUS];
    *count = fake_gpus(g);
    return 0;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    fake_gpu g[FAKE_MAX_GPUS];
    if (ordinal >= fake_gpus(g)) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *device = ordinal;
    return 0;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    fake_gpu g[FAKE_MAX_GPUS];
    if (d >= fake_gpus(g)) return 101;
    snprintf(name, (size_t)len, "%s", g[d].name);
    return 0;
}

CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice d) {
    fake_gpu g[FAKE_MAX_GPUS];
    if (d >= fake_gpus(g)) return 101;
    if (attrib == 75) *value = g[d].major;      /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    else if (attrib == 76) *value = g[d].minor; /* ..._MINOR */
    else return 1;
    return 0;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
    fake_gpu g[FAKE_MAX_GPUS];
    if (d >= fake_gpus(g)) return 101;
    *bytes = (size_t)(g[d].mib * 1024ULL * 1024ULL);
    return 0;
}

CUresult cuDeviceGetUuid(unsigned char uuid[16], CUdevice d) {
    fake_uuid(d, uuid);
    return 0;
}
