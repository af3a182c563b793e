#!/usr/bin/env bash
# Installs the Python trainer (src/train/python/train_lora.py): a virtual environment, .venv-trainer/ at the
# repository root (git-ignored), with the pinned src/train/python/requirements.txt. The trainer's tests and
# `rsi.trainer.python` find it there (MASS_TRAINER_PYTHON names another Python).
#
#   bash scripts/install-trainer.sh
#
# CUDA machines: the pinned torch is resolved from the configured package index, which on a machine without a GPU
# (this project's CI) is the CPU build. For a GPU, give pip the CUDA wheel index that matches the driver, and ask for
# the flash-linear-attention kernels (src/train/python/requirements-cuda.txt; Qwen3.5/3.6's linear attention runs on
# transformers' much slower reference implementation without them), e.g.
#   MASS_TRAINER_CUDA=1 MASS_TRAINER_PIP_ARGS="--extra-index-url https://download.pytorch.org/whl/cu128" \
#     bash scripts/install-trainer.sh
# and check with: .venv-trainer/bin/python -c 'import torch, fla; print(torch.cuda.is_available())'
set -euo pipefail
cd "$(dirname "$0")/.."

venv=".venv-trainer"
requirements="src/train/python/requirements.txt"

# A Python 3.10+ that can create a virtual environment with pip in it (Debian's needs python3-venv for that).
usable() {
  "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1
}
base=""
for candidate in "${MASS_TRAINER_BASE_PYTHON:-}" /usr/bin/python3 python3; do
  if [ -n "$candidate" ] && command -v "$candidate" >/dev/null 2>&1 && usable "$candidate"; then
    base="$candidate"
    break
  fi
done
if [ -z "$base" ] && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "install-trainer: installing python3-venv" >&2
  # One apt at a time: CI runs this beside scripts/install-container-engine.sh, which may install packages too.
  (
    flock 9
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3-venv
  ) 9>"${TMPDIR:-/tmp}/mass-apt.lock"
  usable /usr/bin/python3 && base=/usr/bin/python3
fi
if [ -z "$base" ]; then
  echo "install-trainer: no Python 3.10+ with venv and ensurepip found; install one (Debian: python3-venv)," \
    "or name it in MASS_TRAINER_BASE_PYTHON" >&2
  exit 1
fi

# A folder left by a run that stopped half-way has no python in it: start it again.
if [ ! -x "$venv/bin/python" ]; then
  echo "install-trainer: creating $venv with $base ($("$base" --version 2>&1))" >&2
  rm -rf "$venv"
  "$base" -m venv "$venv"
fi
# shellcheck disable=SC2086 # MASS_TRAINER_PIP_ARGS is a list of pip options
cuda_requirements=()
[ "${MASS_TRAINER_CUDA:-0}" = "1" ] && cuda_requirements=(-r src/train/python/requirements-cuda.txt)
"$venv/bin/python" -m pip install --no-input --disable-pip-version-check -r "$requirements" "${cuda_requirements[@]}" \
  ${MASS_TRAINER_PIP_ARGS:-}
"$venv/bin/python" - <<'EOF'
import torch, transformers, peft
from transformers.models.qwen3_5 import modeling_qwen3_5  # the paper's model class (Qwen3.5/3.6) must load
import importlib.util
kernels = "installed" if importlib.util.find_spec("fla") else "not installed (MASS_TRAINER_CUDA=1 adds them)"
print(f"install-trainer: torch {torch.__version__} (cuda: {torch.cuda.is_available()}), "
      f"transformers {transformers.__version__}, peft {peft.__version__}, flash-linear-attention {kernels}")
EOF
