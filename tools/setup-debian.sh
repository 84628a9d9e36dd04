#!/usr/bin/env bash
# Installs what perfgap needs to build and test on Debian 12 (bookworm), with apt-get.
# Packages already present are left alone; run as root or with sudo available.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config ccache
  libfmt-dev nlohmann-json3-dev libexpected-dev libcli11-dev libyaml-cpp-dev zlib1g-dev libpugixml-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev    # libFuzzer targets (tools/run-fuzz.sh)
  libarchive-dev              # snapshot OUT.tar.gz and check --root FILE.tar.gz
  libsimdjson-dev             # fleet: thousands of node reports in seconds
  libsqlite3-dev              # analyze nsys: Nsight Systems SQLite exports
  openmpi-bin libopenmpi-dev  # perfgap-collbench MPI backend and its mpirun tests
  slurm-wlm munge             # the real Slurm cluster of the fan-out and health-check tests
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup-debian.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
