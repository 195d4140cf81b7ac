#!/usr/bin/env bash
# GPU acceptance: proof on a real GPU that cuenv's view of the machine, the environments it already
# has and a CUDA environment cuenv builds are right (issues 19 §4, 30 §3). One short run that needs
# no network; every step prints PASS, FAIL or SKIP with its evidence, and the exit status is 1 when
# any step failed.
#
#   benchmarks/gpu_acceptance.sh --fetch-wheels DIR    # once, on a machine with PyPI: the offline inputs
#   ACCEPT_WHEELS=DIR benchmarks/gpu_acceptance.sh     # on the GPU machine, no network needed
#   ACCEPT_RECORD=docs/guides/gpu-acceptance.md ACCEPT_WHEELS=DIR benchmarks/gpu_acceptance.sh
#
# Steps:
#   1. detection: real NVML (libnvidia-ml.so.1), libcuda.so.1 and nvidia-smi agree with each other
#      and with `cuenv info` (driver version, newest CUDA, GPU count and names);
#   2. the machine's own Python environment (the one a GPU image comes with, holding its framework)
#      adopted with `cuenv adopt` (read, never changed), then `cuenv check` of it (its stack and the
#      kernels its libraries carry, against this GPU) and `cuenv doctor` of it (no failed check);
#   3. a bare CUDA environment (recipe cuda-12.1: NVIDIA's runtime and ptxas wheels, 21 MB) created
#      from the wheels in ACCEPT_WHEELS, served as a package index on 127.0.0.1 (no other network);
#   4. inside `cuenv use` of it (the real bash hook): nvidia-smi, the environment's ptxas compiles a
#      kernel for this GPU and the environment's libcudart runs it on the real driver (the library
#      actually loaded is checked to be the environment's), torch checks where torch is there; then
#      `cuenv deactivate` restores PATH and LD_LIBRARY_PATH exactly; `cuenv doctor` of it.
# Where nvcc is on PATH, a small CUDA program also runs a kernel with the system's toolkit.
#
# Settings (environment variables):
#   CUENV            how to run cuenv (default: cuenv on PATH, else python3 -m cuenv)
#   ACCEPT_WHEELS    folder of the wheels for step 3 (made by --fetch-wheels); without it, step 3
#                    downloads from PyPI (or CUENV_MIRRORS) and fails where there is no network
#   ACCEPT_ADOPT     the environment to adopt in step 2 (default: the prefix of ACCEPT_PYTHON)
#   ACCEPT_PYTHON    the Python to run helpers with and whose environment is adopted (default: python3)
#   ACCEPT_RECIPE    recipe to create in step 3 (default: cuda-12.1; a torch recipe needs a network)
#   ACCEPT_ENV       environment name (default: gpu-accept)
#   ACCEPT_SKIP_CREATE=1  steps 1 and 2 only; ACCEPT_SKIP_ADOPT=1 no step 2; ACCEPT_KEEP=1 keeps the environments
#   ACCEPT_RECORD    also write the results as Markdown to this file (date, GPU, driver, steps)
#   ACCEPT_DOCTOR_ARGS  extra arguments for `cuenv doctor` (the tests pass --root)
set -u
export LC_ALL=C

# The offline inputs: the cuda-12.1 recipe's wheels, hash-checked by pip against PyPI's hashes.
if [ "${1:-}" = --fetch-wheels ]; then
    dest=${2:?usage: gpu_acceptance.sh --fetch-wheels DIR}
    mkdir -p "$dest" || exit 1
    reqs=$(mktemp)
    printf '%s\n' \
        "nvidia-cuda-runtime-cu12==12.1.105 --hash=sha256:6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40" \
        "nvidia-cuda-nvcc-cu12==12.1.105 --hash=sha256:a0712a05ffd57d9f017580ffcc808b207f7f4ef7a5ca8ac1312318b153739a18" >"$reqs"
    "${ACCEPT_PYTHON:-python3}" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
        --platform manylinux1_x86_64 --python-version 3 --dest "$dest" -r "$reqs"
    rc=$?
    rm -f "$reqs"
    exit $rc
fi

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

# doctor_step STEP NAME: `cuenv doctor NAME` has no failed check
doctor_step() {
    # shellcheck disable=SC2086 # ACCEPT_DOCTOR_ARGS is a list of words on purpose
    if $CUENV doctor "$2" --json ${ACCEPT_DOCTOR_ARGS:-} >"$WORK/doctor.json" 2>"$WORK/doctor.err" || [ -s "$WORK/doctor.json" ]; then
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
        step "$1" "${verdict%%	*}" "${verdict#*	}"
    else
        step "$1" FAIL "$(tail -n 1 "$WORK/doctor.err")"
    fi
}

# ------------------------------------------------------- 2. the machine's own environment, adopted
own=${ACCEPT_ADOPT:-$("$PY" -c 'import sys; print(sys.prefix)')}
OWN_NAME="$ENV_NAME-own"
if [ "${ACCEPT_SKIP_ADOPT:-0}" = 1 ]; then
    step adopt SKIP "ACCEPT_SKIP_ADOPT=1"
elif $CUENV adopt "$own" -n "$OWN_NAME" >"$WORK/adopt.out" 2>"$WORK/adopt.err"; then
    step adopt PASS "$(head -n 1 "$WORK/adopt.out")"
    if $CUENV check "$OWN_NAME" >"$WORK/own-check.out" 2>&1; then
        step "own check" PASS "$(head -n 1 "$WORK/own-check.out"); $(grep -m1 '^kernels:' "$WORK/own-check.out")"
    else
        step "own check" FAIL "$(head -n 1 "$WORK/own-check.out"); $(grep -m1 -A1 '^error:' "$WORK/own-check.out" | tail -n 1 | sed 's/^ *//')"
    fi
    doctor_step "own doctor" "$OWN_NAME"
    if [ "${ACCEPT_KEEP:-0}" != 1 ]; then
        $CUENV remove "$OWN_NAME" --yes >/dev/null 2>&1 || true  # forgets it; the environment is left as it was
    fi
else
    step adopt FAIL "$own: $(grep -m1 '^error:' "$WORK/adopt.err" || tail -n 1 "$WORK/adopt.err")"
fi

# -------------------------------------------------- 3. a CUDA environment from the carried wheels
ACCEPT_RECIPE=${ACCEPT_RECIPE:-cuda-12.1}
created=0
server=
if [ "${ACCEPT_SKIP_CREATE:-0}" = 1 ]; then
    step create SKIP "ACCEPT_SKIP_CREATE=1"
else
    mirror=
    if [ -n "${ACCEPT_WHEELS:-}" ]; then
        # A PEP 503 index of the carried wheels on 127.0.0.1: what a PyPI mirror serves, and nothing else.
        "$PY" - "$ACCEPT_WHEELS" "$WORK/index" <<'EOF' || step index FAIL "no wheels in $ACCEPT_WHEELS"
import hashlib, html, pathlib, re, shutil, sys
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheels = sorted(src.glob("*.whl"))
if not wheels:
    raise SystemExit(1)
for whl in wheels:
    project = re.sub(r"[-_.]+", "-", whl.name.split("-")[0]).lower()
    folder = out / "simple" / project
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(whl, folder / whl.name)
    digest = hashlib.sha256(whl.read_bytes()).hexdigest()
    with open(folder / "index.html", "a") as fh:
        fh.write(f'<a href="{html.escape(whl.name)}#sha256={digest}">{html.escape(whl.name)}</a>\n')
EOF
        port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        "$PY" -m http.server "$port" --bind 127.0.0.1 --directory "$WORK/index" >/dev/null 2>&1 &
        server=$!
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            "$PY" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/simple/', timeout=1)" 2>/dev/null && break
            sleep 0.3
        done
        mirror="pypi=http://127.0.0.1:$port/simple"
    fi
    start=$(date +%s)
    if CUENV_MIRRORS=${mirror:-${CUENV_MIRRORS:-}} CUENV_FRAMEWORK_INDEX=pypi \
        $CUENV create "$ACCEPT_RECIPE" -n "$ENV_NAME" --engine venv --force >"$WORK/create.out" 2>"$WORK/create.err"; then
        created=1
        step create PASS "$ACCEPT_RECIPE as $ENV_NAME in $(( $(date +%s) - start )) s, from ${mirror:-the package index}"
    else
        step create FAIL "$ACCEPT_RECIPE: $(grep -m1 '^error:' "$WORK/create.err" || tail -n 1 "$WORK/create.err")"
    fi
    if [ -n "$server" ]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; fi
fi

# --------------------------------- 4. inside `cuenv use`: its ptxas, its runtime, the real driver
if [ $created = 1 ]; then
    # the first GPU's compute capability as cuenv reads it (step 1 held cuenv info to NVML and nvidia-smi)
    cc=$("$PY" -c 'import json, sys; g = (json.load(open(sys.argv[1])).get("gpus") or [{}])[0]; print((g.get("compute_capability") or "").replace(".", ""))' \
        "$WORK/info.json" 2>/dev/null)
    cat >"$WORK/fill.ptx" <<'EOF'
.version 7.0
.target sm_52
.address_size 64
.visible .entry fill(.param .u64 out, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<7>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p, %r5, %r1;
    @%p bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd2, %rd2, %rd3;
    shl.b32 %r6, %r5, 1;
    st.global.u32 [%rd2], %r6;
DONE:
    ret;
}
EOF
    cat >"$WORK/run_cubin.py" <<'EOF'
"""Run fill() from a cubin: memory through the environment's libcudart, the kernel through libcuda."""
import ctypes, os, pathlib, re, sys
# The runtime's soname from the first folder on LD_LIBRARY_PATH that has one (the environment's, once
# `cuenv use` put it first); the loader then picks the file, and /proc/self/maps says which it was.
names = [p.name for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d for p in sorted(pathlib.Path(d).glob("libcudart.so.[0-9]*"))]
if not names:
    raise SystemExit("no libcudart.so.N on LD_LIBRARY_PATH")
rt = ctypes.CDLL(names[0])
n = 1 << 20
dev = ctypes.c_void_p()
err = rt.cudaMalloc(ctypes.byref(dev), n * 4)
loaded = sorted(set(re.findall(r"(/\S*libcudart\.so[.\d]*)", open("/proc/self/maps").read())))
if err:
    raise SystemExit(f"cudaMalloc: CUDA error {err} (libcudart: {', '.join(loaded)})")
cu = ctypes.CDLL("libcuda.so.1")
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
image = open(sys.argv[1], "rb").read()
for call, args in (("cuModuleLoadData", (ctypes.byref(mod), image)), ("cuModuleGetFunction", (ctypes.byref(fn), mod, b"fill"))):
    rc = getattr(cu, call)(*args)
    if rc:
        raise SystemExit(f"{call}: CUDA driver error {rc}")
out, count = ctypes.c_void_p(dev.value), ctypes.c_uint(n)
params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(out), ctypes.c_void_p), ctypes.cast(ctypes.byref(count), ctypes.c_void_p))
rc = cu.cuLaunchKernel(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, None, params, None)
if rc or rt.cudaDeviceSynchronize():
    raise SystemExit(f"cuLaunchKernel: CUDA driver error {rc}")
host = (ctypes.c_uint * n)()
if rt.cudaMemcpy(host, dev, n * 4, 2):
    raise SystemExit("cudaMemcpy failed")
wrong = next((i for i in range(n) if host[i] != 2 * i), None)
if wrong is not None:
    raise SystemExit(f"wrong value at {wrong}: {host[wrong]}")
print(f"{n} values right; libcudart: {', '.join(loaded)}")
EOF
    cat >"$WORK/inside.sh" <<'EOF'
eval "$(command cuenv shell-init bash)"
before_path=$PATH before_ld=${LD_LIBRARY_PATH-unset}
cuenv use "$ENV_NAME" >/dev/null || { echo "FAIL	use	cuenv use $ENV_NAME failed"; exit 0; }
prefix=$(cd "$(dirname "$(command -v python)")/.." && pwd)
echo "PASS	use	CUENV_ACTIVE=${CUENV_ACTIVE-} python=$(command -v python)"
if out=$(nvidia-smi -L 2>&1); then echo "PASS	check nvidia-smi	$(echo "$out" | head -n 1)"
else echo "FAIL	check nvidia-smi	$(echo "$out" | tail -n 1)"; fi
ptxas=$(command -v ptxas)
case "$ptxas" in
    "$prefix"/*) arch=sm_${GPU_CC:-52}
        if out=$(ptxas -arch="$arch" -o "$WORK/fill.cubin" "$WORK/fill.ptx" 2>&1); then
            echo "PASS	ptxas	the environment's ptxas ($ptxas) built fill() for $arch"
            if [ -z "${GPU_CC:-}" ]; then echo "SKIP	kernel	no GPU compute capability in cuenv info"
            elif out=$(python "$WORK/run_cubin.py" "$WORK/fill.cubin" 2>&1); then
                case "$out" in
                    *"$prefix"/*) echo "PASS	kernel	$out" ;;
                    *) echo "FAIL	kernel	a libcudart from outside the environment was loaded: $out" ;;
                esac
            else echo "FAIL	kernel	$(echo "$out" | tail -n 1)"; fi
        else echo "FAIL	ptxas	$arch: $(echo "$out" | tail -n 1)"; fi ;;
    "") echo "FAIL	ptxas	no ptxas on PATH inside the environment" ;;
    *) echo "FAIL	ptxas	ptxas comes from outside the environment: $ptxas" ;;
esac
python - <<'PYEOF'
import importlib.util
if importlib.util.find_spec("torch") is not None:
    import torch
    ok = torch.cuda.is_available()
    print(("PASS" if ok else "FAIL") + f"\tcheck torch\ttorch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN "
          f"{torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0) if ok else 'torch.cuda.is_available() is False'}")
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
    export WORK
    PATH="$WORK/bin:$PATH" ENV_NAME="$ENV_NAME" GPU_CC="$cc" \
        bash --norc --noprofile "$WORK/inside.sh" >"$WORK/inside.out" 2>"$WORK/inside.err"
    if ! grep -q 'deactivate' "$WORK/inside.out"; then
        step use FAIL "the activated shell stopped: $(tail -n 1 "$WORK/inside.err")"
    fi
    while IFS="$(printf '\t')" read -r status name detail; do
        step "$name" "$status" "$detail"
    done <"$WORK/inside.out"
    doctor_step doctor "$ENV_NAME"
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
