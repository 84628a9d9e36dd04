#!/usr/bin/env bash
# Installs, with apt-get on Debian 12 (bookworm), what perfgap needs:
#   tools/setup-debian.sh            building perfgap (the README's first command; about a minute)
#   tools/setup-debian.sh --test     ... and the whole test suite (tools/test.sh): GoogleTest,
#                                    clang for the fuzzers, Open MPI, Slurm and munge, Chromium
#                                    (headless, for the HTML report tests), runc and bubblewrap
#                                    (perfgap inside real containers), systemd's
#                                    systemd-analyze (the service and timer), and into
#                                    /var/tmp/perfgap-tools, none of them installed: promtool,
#                                    prometheus and prometheus-node-exporter taken out of
#                                    Debian's packages (the monitoring pipeline tests), and the
#                                    npm kubernetes-models validators (the Kubernetes manifests)
#   tools/setup-debian.sh --release  ... and the release checks (tools/release-check.sh): the
#                                    aarch64 cross compiler, qemu-user, debootstrap, jq, and the
#                                    arm64 architecture in dpkg's list, so that
#                                    tools/aarch64-sysroot.sh can download (not install) the
#                                    arm64 -dev packages
# Packages already present are left alone; run as root or with sudo available.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config ccache
  libfmt-dev nlohmann-json3-dev libexpected-dev libcli11-dev libyaml-cpp-dev zlib1g-dev libpugixml-dev
  libarchive-dev              # snapshot OUT.tar.gz and check --root FILE.tar.gz
  rapidjson-dev               # fleet reports and Kineto traces (header-only)
  libsqlite3-dev              # analyze nsys: Nsight Systems SQLite exports
  libzstd-dev                 # analyze perf: zstd-compressed perf.data (perf record -z)
)
arm64=0
test_tools=0
for arg in "$@"; do
  case "$arg" in
    --test)
      test_tools=1
      packages+=(
        libgtest-dev libgmock-dev libbenchmark-dev
        clang libclang-rt-14-dev    # libFuzzer targets (tools/run-fuzz.sh)
        lld                         # links them (fuzz/CMakeLists.txt)
        clang-tidy-14               # tools/tidy-changed.sh (CI lints the last commit)
        openmpi-bin libopenmpi-dev  # perfgap-collbench MPI backend and its mpirun tests
        slurm-wlm munge             # the real Slurm cluster of the fan-out and health-check tests
        dpkg-dev file               # the release checks' package build (dpkg-shlibdeps)
        python3-jsonschema          # tests: an independent validator of docs/report.schema.json
        chromium                    # tests: --format html pages loaded headless (tests/cli/test_html_chromium.cpp)
        runc bubblewrap             # tests: perfgap inside real containers (tests/cli/test_real_containers.cpp)
        systemd                     # tests: systemd-analyze verify/security on packaging/systemd (tests/cli/test_monitoring_systemd.cpp)
      )
      # node and npm for the Kubernetes manifest validator; a node already there (another
      # vendor's package) is used as it is: Debian's npm would conflict with it.
      command -v npm >/dev/null || packages+=(nodejs npm) ;;
    --release)
      arm64=1
      packages+=(
        g++-aarch64-linux-gnu qemu-user-static debootstrap dpkg-dev file jq
      ) ;;
    *) echo "setup-debian.sh: unknown argument $arg (--test, --release)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
need_arch=0
if [ "$arm64" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then need_arch=1; fi
# promtool (the Prometheus output tests run it on every prometheus output, and `promtool test
# rules` on contrib/prometheus), the prometheus server and prometheus-node-exporter (the
# monitoring pipeline test starts both on loopback) come out of Debian's packages without
# installing them: installing would also set up and start their services (ports 9090, 9100).
# Each is a Go executable needing only libc.
promtool_dir=/var/tmp/perfgap-tools
fetch_promtool() {
  [ "$test_tools" = 1 ] || return 0
  [ -x "$promtool_dir/promtool" ] && [ -x "$promtool_dir/prometheus" ] && [ -x "$promtool_dir/prometheus-node-exporter" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt-get download writes as _apt
  if (cd "$tmp" && apt-get download prometheus prometheus-node-exporter >/dev/null 2>&1) &&
     dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x" && dpkg-deb -x "$tmp"/prometheus-node-exporter_*.deb "$tmp/x" &&
     mkdir -p "$promtool_dir" && cp "$tmp/x/usr/bin/promtool" "$tmp/x/usr/bin/prometheus" "$tmp/x/usr/bin/prometheus-node-exporter" "$promtool_dir/"; then
    :
  else
    echo "setup-debian.sh: WARNING: could not take promtool, prometheus and prometheus-node-exporter out of Debian's packages; the Prometheus tests will skip" >&2
  fi
  rm -rf "$tmp"
}
# The Kubernetes manifests (contrib/kubernetes) are validated against the Kubernetes API's
# schemas by the npm kubernetes-models validators, installed (pinned) beside promtool, outside
# the repository (tests/cli/test_kubernetes_manifests.cpp).
k8s_dir=$promtool_dir/k8s
fetch_k8s_validators() {
  [ "$test_tools" = 1 ] && [ ! -f "$k8s_dir/node_modules/kubernetes-models/package.json" ] || return 0
  mkdir -p "$k8s_dir"
  if ! (cd "$k8s_dir" && npm install --no-audit --no-fund --silent kubernetes-models@4.5.1 yaml@2.9.1 >/dev/null 2>&1); then
    echo "setup-debian.sh: WARNING: could not install the npm kubernetes-models validators into $k8s_dir; the manifest tests will skip" >&2
  fi
}
if [ ${#missing[@]} -eq 0 ] && [ "$need_arch" = 0 ]; then
  fetch_promtool
  fetch_k8s_validators
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup-debian.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
if [ "$need_arch" = 1 ]; then
  $sudo dpkg --add-architecture arm64
fi
$sudo apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
fetch_promtool
fetch_k8s_validators
