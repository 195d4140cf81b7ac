#!/usr/bin/env bash
# GPU acceptance: proof on a real GPU that cuenv's view of the machine and a framework environment
# from PyPI are right (issue 19 §4). One short run; every step prints PASS, FAIL or SKIP with its
# evidence, and the exit status is 1 when any step failed.
#
#   benchmarks/gpu_acceptance.sh                       # on a machine with an NVIDIA GPU
#   ACCEPT_RECORD=docs/guides/gpu-acceptance-run.md benchmarks/gpu_acceptance.sh
#
# Steps:
#   1. detection: real NVML (libnvidia-ml.so.1), libcuda.so.1 and nvidia-smi agree with each other
#      and with `cuenv info` (driver version, newest CUDA, GPU count and names);
#   2. a framework environment from PyPI: `cuenv create RECIPE --engine venv` with
#      CUENV_FRAMEWORK_INDEX=pypi (PyPI only: the route a PyPI-only network gets);
#   3. inside `cuenv use` (the real bash hook): the five acceptance checks: nvidia-smi, nvcc -V, the
#      cuDNN version, torch.cuda.is_available() and a kernel run; then `cuenv deactivate` restores
#      PATH and LD_LIBRARY_PATH exactly;
#   4. `cuenv doctor NAME` has no failed check.
# Where nvcc is on PATH, a small CUDA program also runs a kernel with no framework at all (useful on a
# machine that cannot download one).
#
# Settings (environment variables):
#   CUENV            how to run cuenv (default: cuenv on PATH, else python3 -m cuenv)
#   ACCEPT_RECIPE    recipe to create (default: the torch recipe for the driver's newest CUDA)
#   ACCEPT_ENV       environment name (default: gpu-accept)
#   ACCEPT_SKIP_CREATE=1  only detection (no download); ACCEPT_KEEP=1 keeps the environment
#   ACCEPT_RECORD    also write the results as Markdown to this file (date, GPU, driver, steps)
#   ACCEPT_DOCTOR_ARGS  extra arguments for `cuenv doctor` (the tests pass --root)
# A machine without network needs a mirror (CUENV_MIRRORS, see docs/guides/mirrors.md) or a warm
# cache (CUENV_CACHE_DIR) for step 2; without either, step 2 fails with uv's reason.
set -u
export LC_ALL=C

if [ -z "${CUENV:-}" ]; then
    if command -v cuenv >/dev/null 2>&1; then CUENV=cuenv; else CUENV="python3 -m cuenv"; fi
fi
PY=${ACCEPT_PYTHON:-python3}
ENV_NAME=${ACCEPT_ENV:-gpu-accept}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cuenv-accept.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
RESULTS="$WORK/results"
: >"$RESULTS"
failed=0

# step NAME STATUS DETAIL: one result line (kept for the summary and the record)
step() {
    printf '%-4s %-22s %s\n' "$2" "$1" "$3"
    printf '%s\t%s\t%s\n' "$2" "$1" "$3" >>"$RESULTS"
    if [ "$2" = FAIL ]; then failed=1; fi
}

# ---------------------------------------------------------------------------------- 1. detection
# NVML and libcuda through ctypes: the libraries the loader finds, as every framework loads them.
"$PY" - >"$WORK/nvml.txt" 2>&1 <<'EOF'
import ctypes
try:
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
except OSError as exc:
    raise SystemExit(f"no libnvidia-ml.so.1: {exc}")
init = getattr(nvml, "nvmlInit_v2", None) or nvml.nvmlInit
rc = init()
if rc != 0:
    raise SystemExit(f"nvmlInit failed: {rc}")
buf = ctypes.create_string_buffer(96)
nvml.nvmlSystemGetDriverVersion(buf, 96)
cuda = ctypes.c_int()
nvml.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(cuda))
count = ctypes.c_uint()
nvml.nvmlDeviceGetCount_v2(ctypes.byref(count))
names = []
for i in range(count.value):
    dev = ctypes.c_void_p()
    nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(dev))
    name = ctypes.create_string_buffer(96)
    nvml.nvmlDeviceGetName(dev, name, 96)
    names.append(name.value.decode())
print(f"driver={buf.value.decode()}")
print(f"cuda={cuda.value // 1000}.{cuda.value % 1000 // 10}")
print(f"count={count.value}")
print("names=" + ";".join(names))
EOF
nvml_rc=$?
"$PY" - >"$WORK/libcuda.txt" 2>&1 <<'EOF'
import ctypes
try:
    cu = ctypes.CDLL("libcuda.so.1")
except OSError as exc:
    raise SystemExit(f"no libcuda.so.1: {exc}")
rc = cu.cuInit(0)
if rc != 0:
    raise SystemExit(f"cuInit failed: {rc}")
v, n = ctypes.c_int(), ctypes.c_int()
cu.cuDriverGetVersion(ctypes.byref(v))
cu.cuDeviceGetCount(ctypes.byref(n))
print(f"cuda={v.value // 1000}.{v.value % 1000 // 10}")
print(f"count={n.value}")
EOF
cuda_rc=$?
smi_out=$(nvidia-smi --query-gpu=driver_version,name --format=csv,noheader 2>&1)
smi_rc=$?
$CUENV info --json >"$WORK/info.json" 2>"$WORK/info.err"
info_rc=$?

get() { sed -n "s/^$2=//p" "$WORK/$1.txt" | head -n 1; }
if [ $nvml_rc -eq 0 ]; then
    step nvml PASS "driver $(get nvml driver), CUDA $(get nvml cuda), $(get nvml count) GPU(s): $(get nvml names)"
else
    step nvml FAIL "$(tail -n 1 "$WORK/nvml.txt")"
fi
if [ $cuda_rc -eq 0 ]; then
    step libcuda PASS "CUDA $(get libcuda cuda), $(get libcuda count) device(s)"
else
    step libcuda FAIL "$(tail -n 1 "$WORK/libcuda.txt")"
fi
if [ $smi_rc -eq 0 ]; then
    step nvidia-smi PASS "$(printf '%s' "$smi_out" | tr '\n' ';')"
else
    step nvidia-smi FAIL "exit $smi_rc: $(printf '%s' "$smi_out" | tail -n 1)"
fi
if [ $info_rc -eq 0 ]; then
    "$PY" - "$WORK/info.json" >"$WORK/cuenv.txt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
drv = d.get("driver") or {}
print(f"driver={drv.get('version')}")
print(f"cuda={drv.get('max_cuda')}")
print(f"count={len(d.get('gpus') or [])}")
print("names=" + ";".join(g.get("name", "?") for g in d.get("gpus") or []))
print(f"source={drv.get('source')}")
EOF
    step "cuenv info" PASS "driver $(get cuenv driver) (from $(get cuenv source)), CUDA $(get cuenv cuda), $(get cuenv count) GPU(s)"
else
    step "cuenv info" FAIL "$(tail -n 1 "$WORK/info.err")"
fi

if [ $nvml_rc -eq 0 ] && [ $cuda_rc -eq 0 ] && [ $smi_rc -eq 0 ] && [ $info_rc -eq 0 ]; then
    smi_driver=$(printf '%s\n' "$smi_out" | head -n 1 | cut -d, -f1 | tr -d ' ')
    smi_count=$(printf '%s\n' "$smi_out" | grep -c .)
    smi_names=$(printf '%s\n' "$smi_out" | cut -d, -f2- | sed 's/^ *//' | paste -sd';' -)
    problems=""
    [ "$(get nvml driver)" = "$smi_driver" ] || problems="$problems driver: NVML $(get nvml driver) vs nvidia-smi $smi_driver;"
    [ "$(get nvml driver)" = "$(get cuenv driver)" ] || problems="$problems driver: NVML $(get nvml driver) vs cuenv $(get cuenv driver);"
    [ "$(get nvml cuda)" = "$(get libcuda cuda)" ] || problems="$problems CUDA: NVML $(get nvml cuda) vs libcuda $(get libcuda cuda);"
    [ "$(get nvml cuda)" = "$(get cuenv cuda)" ] || problems="$problems CUDA: NVML $(get nvml cuda) vs cuenv $(get cuenv cuda);"
    for n in "$(get libcuda count)" "$smi_count" "$(get cuenv count)"; do
        [ "$(get nvml count)" = "$n" ] || problems="$problems GPU count: NVML $(get nvml count) vs $n;"
    done
    [ "$(get nvml names)" = "$smi_names" ] || problems="$problems names: NVML $(get nvml names) vs nvidia-smi $smi_names;"
    if [ -z "$problems" ]; then
        step agreement PASS "NVML, libcuda, nvidia-smi and cuenv agree"
    else
        step agreement FAIL "${problems# }"
    fi
else
    step agreement SKIP "a detection source failed (above)"
fi

# A kernel without any framework, where a toolkit is on PATH: proof of a GPU run even on a machine
# that cannot download a framework.
if command -v nvcc >/dev/null 2>&1; then
    cat >"$WORK/kernel.cu" <<'EOF'
#include <cstdio>
__global__ void fill(int *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 2 * i; }
static int host[1 << 20];
int main() {
    const int n = 1 << 20;
    int *dev = 0;
    cudaError_t e = cudaMalloc(&dev, n * sizeof(int));
    if (e != cudaSuccess) { printf("cudaMalloc: %s\n", cudaGetErrorString(e)); return 1; }
    fill<<<(n + 255) / 256, 256>>>(dev, n);
    e = cudaMemcpy(host, dev, n * sizeof(int), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { printf("kernel: %s\n", cudaGetErrorString(e)); return 1; }
    for (int i = 0; i < n; i++) if (host[i] != 2 * i) { printf("wrong value at %d\n", i); return 1; }
    cudaDeviceProp p; int d = 0; cudaGetDevice(&d); cudaGetDeviceProperties(&p, d);
    printf("%d values right on %s (sm_%d%d)\n", n, p.name, p.major, p.minor);
    return 0;
}
EOF
    if nvcc -o "$WORK/kernel" "$WORK/kernel.cu" >"$WORK/nvcc.out" 2>&1; then
        if out=$("$WORK/kernel" 2>&1); then step "system kernel" PASS "$(command -v nvcc): $out"
        elif printf '%s' "$out" | grep -q 'insufficient'; then
            # the PATH's toolkit is newer than this driver: a fact about that toolkit, not about cuenv
            step "system kernel" SKIP "$(nvcc --version | grep -m1 -o 'release [0-9.]*') needs a newer driver: $out"
        else step "system kernel" FAIL "$(printf '%s' "$out" | tail -n 1)"; fi
    else
        step "system kernel" FAIL "nvcc: $(tail -n 1 "$WORK/nvcc.out")"
    fi
else
    step "system kernel" SKIP "no nvcc on PATH"
fi

# ------------------------------------------------------------------ 2. a framework env from PyPI
if [ -z "${ACCEPT_RECIPE:-}" ]; then
    case "$(get nvml cuda)" in
        1[3-9].*|12.[89]) ACCEPT_RECIPE=torch-cu128 ;;
        12.[67]) ACCEPT_RECIPE=torch-cu126 ;;
        12.[45]) ACCEPT_RECIPE=torch-cu124 ;;
        *) ACCEPT_RECIPE=torch-cu121 ;;
    esac
fi
created=0
if [ "${ACCEPT_SKIP_CREATE:-0}" = 1 ]; then
    step create SKIP "ACCEPT_SKIP_CREATE=1"
else
    start=$(date +%s)
    if CUENV_FRAMEWORK_INDEX=pypi $CUENV create "$ACCEPT_RECIPE" -n "$ENV_NAME" --engine venv --force \
        >"$WORK/create.out" 2>"$WORK/create.err"; then
        created=1
        step create PASS "$ACCEPT_RECIPE as $ENV_NAME from PyPI in $(( $(date +%s) - start )) s"
    else
        step create FAIL "$ACCEPT_RECIPE: $(grep -m1 '^error:' "$WORK/create.err" || tail -n 1 "$WORK/create.err")"
    fi
fi

# ------------------------------------------------- 3. the five checks inside `cuenv use`, then deactivate
if [ $created = 1 ]; then
    cat >"$WORK/inside.sh" <<'EOF'
eval "$(command cuenv shell-init bash)"
before_path=$PATH before_ld=${LD_LIBRARY_PATH-unset}
cuenv use "$ENV_NAME" >/dev/null || { echo "FAIL	use	cuenv use $ENV_NAME failed"; exit 0; }
echo "PASS	use	CUENV_ACTIVE=${CUENV_ACTIVE-} python=$(command -v python)"
if out=$(nvidia-smi -L 2>&1); then echo "PASS	check nvidia-smi	$(echo "$out" | head -n 1)"
else echo "FAIL	check nvidia-smi	$(echo "$out" | tail -n 1)"; fi
case "$(command -v nvcc 2>/dev/null)" in
    "") echo "SKIP	check nvcc -V	no nvcc in the environment or on PATH (PyPI's CUDA 12 wheels ship none)" ;;
    */.cuenv/shims/nvcc)  # the environment has none; cuenv's shim refuses another release's nvcc
        echo "SKIP	check nvcc -V	no nvcc in the environment (its cuenv shim says how to add one)" ;;
    *) if out=$(nvcc -V 2>&1); then echo "PASS	check nvcc -V	$(command -v nvcc): $(echo "$out" | grep -m1 release)"
       else echo "FAIL	check nvcc -V	$(echo "$out" | tail -n 1)"; fi ;;
esac
python - <<'PYEOF'
import importlib.util
if importlib.util.find_spec("torch") is None:
    for name in ("check cuDNN", "check cuda available", "check kernel"):
        print(f"SKIP\t{name}\tno torch in this environment")
    raise SystemExit(0)
import torch
v = torch.backends.cudnn.version()
print(("PASS" if v else "FAIL") + f"\tcheck cuDNN\ttorch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {v}")
ok = torch.cuda.is_available()
print(("PASS" if ok else "FAIL") + f"\tcheck cuda available\t{torch.cuda.get_device_name(0) if ok else 'torch.cuda.is_available() is False'}")
if ok:
    x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
    got = float((x * 2).sum().item())
    want = float((1 << 20) * ((1 << 20) - 1))
    print(("PASS" if got == want else "FAIL") + f"\tcheck kernel\tsum(2*arange(2^20)) = {got:.0f} (expected {want:.0f})")
else:
    print("SKIP\tcheck kernel\tno usable GPU")
import re
maps = open("/proc/self/maps").read()
libs = sorted({m for m in re.findall(r"\S*/(lib(?:cudart|cudnn|cublas)[^/\s]*\.so[.\d]*)", maps)})
print(f"INFO\tloaded libraries\t{', '.join(libs) or 'none'}")
PYEOF
cuenv deactivate >/dev/null
if [ "$PATH" = "$before_path" ] && [ "${LD_LIBRARY_PATH-unset}" = "$before_ld" ] && [ -z "${CUENV_ACTIVE-}" ]; then
    echo "PASS	deactivate	PATH and LD_LIBRARY_PATH restored"
else
    echo "FAIL	deactivate	PATH or LD_LIBRARY_PATH differ after deactivate"
fi
EOF
    # The hook calls `command cuenv`: put one on PATH that runs $CUENV.
    mkdir -p "$WORK/bin"
    printf '#!/bin/sh\nexec %s "$@"\n' "$CUENV" >"$WORK/bin/cuenv"
    chmod +x "$WORK/bin/cuenv"
    PATH="$WORK/bin:$PATH" ENV_NAME="$ENV_NAME" bash --norc --noprofile "$WORK/inside.sh" >"$WORK/inside.out" 2>"$WORK/inside.err"
    if ! grep -q 'deactivate' "$WORK/inside.out"; then
        step use FAIL "the activated shell stopped: $(tail -n 1 "$WORK/inside.err")"
    fi
    while IFS="$(printf '\t')" read -r status name detail; do
        step "$name" "$status" "$detail"
    done <"$WORK/inside.out"

    # ------------------------------------------------------------------------------ 4. doctor
    # shellcheck disable=SC2086 # ACCEPT_DOCTOR_ARGS is a list of words on purpose
    if $CUENV doctor "$ENV_NAME" --json ${ACCEPT_DOCTOR_ARGS:-} >"$WORK/doctor.json" 2>"$WORK/doctor.err" || [ -s "$WORK/doctor.json" ]; then
        verdict=$("$PY" - "$WORK/doctor.json" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("FAIL\tdoctor printed no JSON"); raise SystemExit
checks = d.get("checks") or []
bad = [c for c in checks if c.get("status") == "error"]
warn = [c for c in checks if c.get("status") == "warning"]
if bad:
    print("FAIL\t" + "; ".join(f"{c.get('name')}: " + ", ".join(f.get("code", "?") for f in c.get("findings") or []
                                                            if f.get("severity") == "error") for c in bad))
else:
    print(f"PASS\t{len(checks)} checks, none failed" + (f", {len(warn)} warning(s): " + ", ".join(c.get('name', '?') for c in warn) if warn else ""))
EOF
)
        step doctor "${verdict%%	*}" "${verdict#*	}"
    else
        step doctor FAIL "$(tail -n 1 "$WORK/doctor.err")"
    fi
    if [ "${ACCEPT_KEEP:-0}" != 1 ]; then
        $CUENV remove "$ENV_NAME" --yes >/dev/null 2>&1 || true
    fi
fi

# --------------------------------------------------------------------------------- summary
summary="$(grep -c '^PASS' "$RESULTS") passed, $(grep -c '^FAIL' "$RESULTS") failed, $(grep -c '^SKIP' "$RESULTS") skipped"
echo "== $summary"
if [ -n "${ACCEPT_RECORD:-}" ]; then
    {
        echo "## $(date -u +%Y-%m-%d) on $(get nvml names | cut -d';' -f1) (driver $(get nvml driver))"
        echo
        echo "Recipe: \`$ACCEPT_RECIPE\`; cuenv: \`$($CUENV --version 2>/dev/null || echo unknown)\`; $summary."
        echo
        echo "| status | step | detail |"
        echo "|---|---|---|"
        while IFS="$(printf '\t')" read -r status name detail; do
            printf '| %s | %s | %s |\n' "$status" "$name" "$(printf '%s' "$detail" | sed 's/|/\\|/g')"
        done <"$RESULTS"
    } >>"$ACCEPT_RECORD"
fi
exit $failed
