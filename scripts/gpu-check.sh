#!/usr/bin/env bash
# The GPU check, for a CUDA machine (about 10 minutes on one H100/H200):
#
#   bash scripts/gpu-check.sh [<out dir>]            (default: ./gpu-check)
#
# 1. installs the trainer's CUDA build (scripts/install-trainer.sh with MASS_TRAINER_CUDA=1; set
#    MASS_TRAINER_PIP_ARGS for your CUDA wheel index, or MASS_GPU_CHECK_SKIP_INSTALL=1 to use the venv as it is);
# 2. runs the trainer's torch tests (test/train/python), which use the GPU where they can;
# 3. runs scripts/gpu_check.py: a random Qwen3.5-style model of about 1.7 B parameters trained 3 steps at a 32k-token
#    window, torch.cuda.max_memory_allocated beside the memory planner's estimate, then the FP8 export and the
#    deployment check against the trainer's own forward. Its figures go to <out dir>/gpu-check.json.
#
# On a machine without CUDA it runs as far as it can: the tests on the CPU, and gpu_check.py on a tiny model.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-check}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONDONTWRITEBYTECODE=1
if [ "${MASS_GPU_CHECK_SKIP_INSTALL:-0}" != "1" ]; then
  MASS_TRAINER_CUDA="${MASS_TRAINER_CUDA:-1}" bash scripts/install-trainer.sh
fi
python=.venv-trainer/bin/python
"$python" -c 'import torch; print("gpu-check: cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")'
status=0
"$python" -m unittest discover -s test/train/python -v 2>&1 | tee "$out/trainer-tests.log" || status=1
"$python" scripts/gpu_check.py --out "$out/run" 2>&1 | tee "$out/gpu-check.log" || status=1
cp "$out/run/gpu-check.json" "$out/gpu-check.json" 2>/dev/null || true
echo "gpu-check: $([ $status -eq 0 ] && echo passed || echo FAILED); figures in $out/gpu-check.json"
exit $status
