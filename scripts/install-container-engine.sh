#!/usr/bin/env bash
# Installs and starts a container engine for `mass benchmark --container-engine docker`, and makes the images the
# bundled container dataset (benchmarks/mass-containers) names, without any image registry:
#
#   bash scripts/install-container-engine.sh
#
# - Debian's docker.io and debootstrap, when missing (root, or sudo).
# - dockerd, when no daemon answers: started in the background with no bridge, no iptables and no IP forwarding
#   (every trial container runs with `--network none`; image builds use the host's network to reach the package
#   mirror), logging to /var/log/mass-dockerd.log.
# - The base image `mass-bench/debian:bookworm`: a minimal Debian (debootstrap --variant=minbase) from the mirror apt
#   already uses, imported with `docker import`. The bundled tasks' Dockerfiles start FROM it.
# - The pinned image `mass-bench/pinned-python:1` that one bundled task names as its docker_image (a prebuilt image,
#   as Terminal-Bench pins one per task): the base image with Python 3 from the same mirror.
#
# Idempotent, and quick when everything is there already. MASS_DEBIAN_MIRROR names another mirror.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
base_image="mass-bench/debian:bookworm"
pinned_image="mass-bench/pinned-python:1"

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-container-engine: installing ${missing[*]}" >&2
  # One apt at a time: CI runs this beside scripts/install-trainer.sh, which may install a package too.
  (
    flock 9
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  ) 9>"${TMPDIR:-/tmp}/mass-apt.lock"
fi

# Debian's client, which matches its daemon (another docker earlier on PATH may be a newer static client).
docker=/usr/bin/docker
[ -x "$docker" ] || docker=$(command -v docker)
export DOCKER_BUILDKIT=0

if ! $sudo "$docker" info >/dev/null 2>&1; then
  echo "install-container-engine: starting dockerd (log: /var/log/mass-dockerd.log)" >&2
  # setsid: the daemon outlives this script and the shell that ran it.
  $sudo setsid dockerd --bridge=none --iptables=false --ip-forward=false \
    >>/var/log/mass-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    $sudo "$docker" info >/dev/null 2>&1 && break
    sleep 0.5
  done
  if ! $sudo "$docker" info >/dev/null 2>&1; then
    echo "install-container-engine: dockerd did not answer within 30 s; its last lines:" >&2
    tail -n 20 /var/log/mass-dockerd.log >&2 || true
    exit 1
  fi
fi

# The mirror apt uses (deb822 sources first, then the one-line format).
mirror="${MASS_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -n1 || true)
fi
mirror="${mirror:-http://deb.debian.org/debian}"

if ! $sudo "$docker" image inspect "$base_image" >/dev/null 2>&1; then
  echo "install-container-engine: making $base_image from $mirror" >&2
  root=$(mktemp -d)
  trap '$sudo rm -rf "$root"' EXIT
  $sudo debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
  # The image's apt reaches the same mirror when a build asks for packages.
  echo "deb $mirror bookworm main" | $sudo tee "$root/etc/apt/sources.list" >/dev/null
  $sudo rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  $sudo tar -C "$root" -c . | $sudo "$docker" import \
    --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$base_image" >/dev/null
  $sudo rm -rf "$root"
  trap - EXIT
fi

if ! $sudo "$docker" image inspect "$pinned_image" >/dev/null 2>&1; then
  echo "install-container-engine: building $pinned_image" >&2
  context=$(mktemp -d)
  cat >"$context/Dockerfile" <<EOF
FROM $base_image
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-minimal \\
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
EOF
  $sudo "$docker" build --network host --quiet --tag "$pinned_image" "$context" >/dev/null
  rm -rf "$context"
fi
echo "install-container-engine: dockerd answers; $base_image and $pinned_image are ready" >&2
