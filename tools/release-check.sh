#!/usr/bin/env bash
# The release checks (issue 13), each timed, in this order:
#   static    build the release preset (static, stripped perfgap; perfgap-collbench; man pages),
#             its perfgap linked from the default build's core library (PERFGAP_RELEASE_OWN_CORE=1:
#             compiled again, as `cmake --preset release` alone does), and run the ReleaseBinary
#             tests against it (ldd, size, link map, golden trees, same reports as the dynamic
#             build, snapshot archives both ways)
#   aarch64   cross-build the release-aarch64 preset and run the same tests under qemu-user
#   chroot    Debian 11 (bullseye) and 13 (trixie) minbase root file systems (debootstrap,
#             kept in $PERFGAP_CHROOT_DIR, default /var/tmp/perfgap-chroots): the static
#             binary inside each, live (proc and sys mounted) and on the golden trees, and its
#             embedded perfgap-gpu started from memory there with the tests' fake NVML library
#   package   CPack .deb and .tar.gz of the release build; dpkg -i, the files (the systemd units
#             disabled, systemd-analyze verify), dpkg -r, dpkg -P
#             (skipped when a perfgap package is already installed: it is never replaced)
#   chroots   only make (or find) the two root file systems, both at once (tools/test.sh runs
#             it in the background while it builds)
# Usage: tools/release-check.sh [STEP...]   (default: static aarch64 chroot package). Needs the default build
# (build/: the tests and the dynamic perfgap) and root for chroot and package; setup:
# tools/setup-debian.sh --test --release. Exit status 0 when every step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(static aarch64 chroot package)
chroot_dir=${PERFGAP_CHROOT_DIR:-/var/tmp/perfgap-chroots}
mirror=${PERFGAP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
failed=()
cleanup=()
on_exit() { local i; for ((i = ${#cleanup[@]} - 1; i >= 0; i--)); do eval "${cleanup[i]}" || true; done; }
trap on_exit EXIT

say() { echo "== release-check: $*"; }
# Every step but `chroots` uses the default build's tests and tools.
if [ "${steps[*]}" != chroots ]; then
  [ -x build/tests/perfgap_cli_tests ] || { echo "release-check.sh: build the default preset first (build/tests/perfgap_cli_tests)" >&2; exit 2; }
fi

# masked JSON: what differs between two runs of the same report (time, version, temp root).
masked() { jq -S '.generated_at="<masked>" | .tool.version="<masked>" | .source.root="<masked>"'; }

step_static() {
  # The library the default build compiled and its tests ran (same compiler and code flags,
  # checked by CMake: src/CMakeLists.txt, PERFGAP_CORE_FROM) is linked here, not compiled a
  # second time; PERFGAP_RELEASE_OWN_CORE=1 compiles the release preset's own, as a release to
  # ship is built (`cmake --preset release` alone).
  local core_from=$PWD/build
  [ "${PERFGAP_RELEASE_OWN_CORE:-0}" = 1 ] && core_from=""
  cmake --preset release -DPERFGAP_CORE_FROM="$core_from" >/dev/null
  cmake --build --preset release
  local bin=build-release/src/perfgap
  say "static: $(stat -c %s $bin) bytes; ldd: $(ldd $bin 2>&1 | head -1 | sed 's/^\s*//'); $(build-release/src/perfgap version | tr '\n' ' ')"
  gpu_helper_libc_only build-release/src/gpu_helper/perfgap-gpu build-release/src/perfgap
  release_tests
}

# perfgap-gpu is dynamic (it dlopen's the driver's libnvidia-ml.so.1) and travels inside the
# static perfgap (started from memory) and beside it in the package: it must need libc (and
# libdl.so.2, where glibc before 2.34 keeps dlopen) and nothing else (readelf -d NEEDED), and
# ask no glibc symbol version newer than 2.17, so it starts in the job images users run
# (RHEL 8's glibc 2.28, Ubuntu 20.04's and Debian 11's 2.31; src/gpu_helper/old_glibc.cpp).
# The perfgap built beside it must carry the same bytes (the embedded copy).
gpu_helper_libc_only() {
  local bin=$1 perfgap=${2:-} needed glibc
  [ -x "$bin" ] || { echo "no $bin" >&2; return 1; }
  needed=$(readelf -d "$bin" | awk '/\(NEEDED\)/ {print $NF}' | tr -d '[]' | sort -u | tr '\n' ' ')
  [ "$needed" = "libc.so.6 libdl.so.2 " ] || { echo "$bin needs more than libc and libdl: $needed" >&2; return 1; }
  glibc=$(readelf -V "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1)
  if [ "$(printf '%s\nGLIBC_2.17\n' "$glibc" | sort -V | tail -1)" != GLIBC_2.17 ]; then
    echo "$bin asks for $glibc: it would not start on glibc before that (RHEL 8, Ubuntu 20.04, Debian 11)" >&2; return 1
  fi
  if [ -n "$perfgap" ]; then
    # The embedded image is the helper byte for byte.
    python3 - "$bin" "$perfgap" <<'PY' || { echo "$perfgap does not carry $bin" >&2; return 1; }
import sys
helper, perfgap = (open(p, "rb").read() for p in sys.argv[1:3])
sys.exit(0 if helper in perfgap else 1)
PY
  fi
  say "perfgap-gpu ($(basename "$(dirname "$(dirname "$(dirname "$bin")")")")): $(stat -c %s "$bin") bytes, NEEDED ${needed% }, newest symbol $glibc${perfgap:+, embedded in $perfgap}"
}

# The ReleaseBinary tests; a skip would mean no binary was found, which is a failure here.
release_tests() {
  local out
  out=$(build/tests/perfgap_cli_tests --gtest_filter='ReleaseBinary.*' 2>&1) || { echo "$out" >&2; return 1; }
  echo "$out" | grep -E '^\[  (PASSED|FAILED|SKIPPED) ' || true
  if grep -q '^\[  SKIPPED \]' <<< "$out"; then echo "$out" >&2; return 1; fi
}

step_aarch64() {
  command -v aarch64-linux-gnu-g++ >/dev/null && command -v qemu-aarch64-static >/dev/null \
    || { echo "needs g++-aarch64-linux-gnu and qemu-user-static (tools/setup-debian.sh --release)" >&2; return 1; }
  tools/aarch64-sysroot.sh
  cmake --preset release-aarch64 >/dev/null
  cmake --build --preset release-aarch64 --target perfgap perfgap-gpu
  gpu_helper_libc_only build-release-aarch64/src/gpu_helper/perfgap-gpu build-release-aarch64/src/perfgap
  local bin=build-release-aarch64/src/perfgap
  say "aarch64: $(stat -c %s $bin) bytes; $(file -b $bin | cut -d, -f1-2); $(qemu-aarch64-static $bin version | tr '\n' ' ')"
  PERFGAP_RELEASE_BINARY=$PWD/$bin PERFGAP_RELEASE_EMULATOR=$(command -v qemu-aarch64-static) release_tests
}

# A minbase root file system of SUITE, made once and kept.
make_chroot() {
  local suite=$1 dir=$chroot_dir/$1
  if [ ! -x "$dir/bin/sh" ]; then
    mkdir -p "$chroot_dir"
    rm -rf "$dir.tmp"
    local t=$SECONDS
    debootstrap --variant=minbase "$suite" "$dir.tmp" "$mirror" > "$chroot_dir/$suite.log" 2>&1 \
      || { echo "debootstrap $suite failed (log: $chroot_dir/$suite.log): $(tail -2 "$chroot_dir/$suite.log")" >&2; return 1; }
    mv "$dir.tmp" "$dir"
    say "chroot: debootstrap $suite in $((SECONDS - t))s"
  fi
}

# Findings as (id, subject, status): what a live run on the same machine must agree on.
findings() { jq -r '.findings[] | "\(.id) \(.subject // "-") \(.status)"' | sort; }

step_chroots() {
  [ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; return 1; }
  command -v debootstrap >/dev/null || { echo "needs debootstrap (tools/setup-debian.sh --release)" >&2; return 1; }
  local rc=0
  make_chroot bullseye & local a=$!
  make_chroot trixie & local b=$!
  wait "$a" || rc=1
  wait "$b" || rc=1
  return $rc
}

step_chroot() {
  [ "$(id -u)" = 0 ] || { echo "chroot needs root" >&2; return 1; }
  command -v debootstrap >/dev/null || { echo "needs debootstrap (tools/setup-debian.sh --release)" >&2; return 1; }
  local bin=build-release/src/perfgap
  [ -x $bin ] || { echo "no $bin: run the static step first" >&2; return 1; }
  local host_live rc=0
  host_live=$($bin check --format json --skip 'cpu.steal' --skip 'placement.*' | findings) || true
  for suite in bullseye trixie; do
    make_chroot "$suite" || { rc=1; continue; }
    local dir=$chroot_dir/$suite
    say "chroot $suite: Debian $(cat "$dir/etc/debian_version"), $(chroot "$dir" /usr/bin/ldd --version | head -1)"
    install -m 0755 $bin "$dir/usr/local/bin/perfgap"
    mkdir -p "$dir/proc" "$dir/sys"
    mount --bind /proc "$dir/proc" && cleanup+=("umount '$dir/proc'")
    mount --rbind /sys "$dir/sys" && mount --make-rslave "$dir/sys" && cleanup+=("umount -R '$dir/sys'")
    # The kernel log too (the kernel-log checks read /dev/kmsg): same node, same log.
    if [ -c /dev/kmsg ]; then
      mkdir -p "$dir/dev" && touch "$dir/dev/kmsg" && mount --bind /dev/kmsg "$dir/dev/kmsg" && cleanup+=("umount '$dir/dev/kmsg'")
    fi
    # The container markers of this machine's root (CI runs in Docker), so the chroot sees the
    # same node: container detection reads them from the root, which is the chroot's here.
    local m
    for m in /.dockerenv /run/.containerenv; do
      if [ -e "$m" ] && [ ! -e "$dir$m" ]; then mkdir -p "$(dirname "$dir$m")"; touch "$dir$m"; cleanup+=("rm -f '$dir$m'"); fi
    done
    # Live: the same node, so the same findings (the 1 s sampled ones left out: they move).
    local live
    live=$(chroot "$dir" /usr/local/bin/perfgap check --format json --skip 'cpu.steal' --skip 'placement.*' | findings) || true
    if [ -z "$live" ]; then echo "chroot $suite: no live report" >&2; rc=1
    elif [ "$live" != "$host_live" ]; then echo "chroot $suite: live findings differ from the host's:" >&2; diff <(echo "$host_live") <(echo "$live") >&2 || true; rc=1
    else say "chroot $suite: live, $(echo "$live" | wc -l) findings as on the host"; fi
    # Trees: the golden reports exactly.
    for tree in tests/fixtures/golden/*.tree; do
      local name; name=$(basename "$tree" .tree)
      rm -rf "$dir/tmp/pg-tree"
      build/tools/perfgap-tree-unpack "$tree" "$dir/tmp/pg-tree" >/dev/null
      local got
      got=$(chroot "$dir" /usr/local/bin/perfgap check --root /tmp/pg-tree --format json | masked) || true
      if [ "$got" != "$(masked < tests/golden/$name.json)" ]; then echo "chroot $suite: $name differs from tests/golden/$name.json" >&2; rc=1; fi
    done
    rm -rf "$dir/tmp/pg-tree"
    [ $rc = 0 ] && say "chroot $suite: golden trees as on the host"
    # The GPU checks from the one copied file: the helper embedded in perfgap starts from
    # memory in this root (its glibc) and reads the fake NVML library of the tests.
    local fake=build/tests/fake_nvml/current/libnvidia-ml.so.1
    if [ -f "$fake" ]; then
      mkdir -p "$dir/tmp/pg-nvml"
      cp "$fake" "$dir/tmp/pg-nvml/"
      printf 'gpus 1\n0 persistence 1\n0 ecc 1\n0 vol_corr 0\n0 vol_unc 0\n' > "$dir/tmp/pg-nvml/script"
      local nvml
      nvml=$(chroot "$dir" env LD_LIBRARY_PATH=/tmp/pg-nvml FAKE_NVML_SCRIPT=/tmp/pg-nvml/script /usr/local/bin/perfgap check \
               --only gpu.nvml --only gpu.ecc --format json | jq -r '.findings[] | "\(.id) \(.status) \(.evidence[0].source // "")"') || true
      rm -rf "$dir/tmp/pg-nvml"
      if grep -q '^gpu.nvml pass perfgap-gpu (embedded in perfgap, run from memory)' <<< "$nvml" && grep -q '^gpu.ecc pass' <<< "$nvml"; then
        say "chroot $suite: the embedded perfgap-gpu ran from memory (fake NVML): gpu.nvml and gpu.ecc pass"
      else
        echo "chroot $suite: the embedded perfgap-gpu did not give the GPU checks: $nvml" >&2; rc=1
      fi
    else
      echo "chroot $suite: no $fake (the default build's tests): embedded helper not checked" >&2; rc=1
    fi
    on_exit; cleanup=()
  done
  return $rc
}

step_package() {
  [ "$(id -u)" = 0 ] || { echo "package needs root (dpkg -i)" >&2; return 1; }
  [ -f build-release/CPackConfig.cmake ] || { echo "no build-release: run the static step first" >&2; return 1; }
  (cd build-release && cpack -G "DEB;TGZ" >/dev/null)
  local deb tgz
  deb=$(ls build-release/perfgap_*.deb | head -1)
  tgz=$(ls build-release/perfgap-*.tar.gz | head -1)
  say "package: $(basename "$deb") ($(stat -c %s "$deb") bytes), $(basename "$tgz"); $(ls build-release/*.deb | xargs -n1 basename | tr '\n' ' ')"
  local depends
  depends=$(dpkg-deb -f "$deb" Depends || true)
  [ -z "$depends" ] || { echo "the static package depends on: $depends" >&2; return 1; }
  # (Listings captured first: grep -q closing a pipe early would fail the pipeline.)
  local control listing
  control=$(dpkg-deb -I "$deb")
  if grep -qE 'preinst|postinst|prerm|postrm' <<< "$control"; then echo "maintainer scripts in $deb" >&2; return 1; fi
  listing=$(tar -tzf "$tgz")
  grep -q '/usr/bin/perfgap$' <<< "$listing" || { echo "no usr/bin/perfgap in $tgz" >&2; return 1; }
  grep -q '/usr/bin/perfgap-gpu$' <<< "$listing" || { echo "no usr/bin/perfgap-gpu in $tgz" >&2; return 1; }
  local deb_listing
  deb_listing=$(dpkg-deb -c "$deb")
  grep -q '/usr/bin/perfgap-gpu$' <<< "$deb_listing" || { echo "no usr/bin/perfgap-gpu in $deb" >&2; return 1; }
  if grep -q installed <<< "$(dpkg-query -W -f='${Status}' perfgap 2>/dev/null || true)"; then
    say "package: a perfgap package is already installed here; dpkg -i/-r not tried"; return 0
  fi
  # dpkg would overwrite (and dpkg -r then delete) a perfgap installed by other means.
  local p
  for p in $(awk '{print $6}' <<< "$deb_listing" | sed 's|^\.||'); do
    if [ -f "$p" ] || [ -L "$p" ]; then say "package: $p exists and is not from the package; dpkg -i/-r not tried"; return 0; fi
  done
  dpkg -i "$deb" >/dev/null
  cleanup+=("dpkg -P perfgap >/dev/null 2>&1")
  local f
  for f in /usr/bin/perfgap /usr/bin/perfgap-health /usr/bin/perfgap-gpu /etc/perfgap/config.yaml /etc/perfgap/health.yaml \
           /usr/share/man/man1/perfgap.1 /usr/share/man/man1/perfgap-check.1 /usr/share/bash-completion/completions/perfgap \
           /usr/lib/systemd/system/perfgap.service /usr/lib/systemd/system/perfgap.timer; do
    [ -e "$f" ] || { echo "dpkg -i: $f missing" >&2; return 1; }
  done
  # The timer is installed disabled (no maintainer script enables it), and the installed units,
  # naming the installed /usr/bin/perfgap, are what systemd accepts.
  if compgen -G '/etc/systemd/system/*.wants/perfgap.*' >/dev/null; then echo "dpkg -i enabled a perfgap unit" >&2; return 1; fi
  grep -q '^ExecStart=/usr/bin/perfgap check ' /usr/lib/systemd/system/perfgap.service || { echo "perfgap.service does not start /usr/bin/perfgap" >&2; return 1; }
  if command -v systemd-analyze >/dev/null; then
    local verify
    verify=$(systemd-analyze verify --man=no /usr/lib/systemd/system/perfgap.timer /usr/lib/systemd/system/perfgap.service 2>&1) &&
      [ -z "$verify" ] || { echo "systemd-analyze verify on the installed units: $verify" >&2; return 1; }
  fi
  grep -q 'linkage: static' <<< "$(/usr/bin/perfgap version)" || { echo "installed perfgap is not the static one" >&2; return 1; }
  /usr/bin/perfgap-health --version >/dev/null
  # The installed (comment-only) config changes no finding.
  build/tools/perfgap-tree-unpack tests/fixtures/golden/kvm-guest.tree /tmp/pg-deb-tree.$$ >/dev/null
  local a b
  a=$(/usr/bin/perfgap check --root /tmp/pg-deb-tree.$$ --format json | masked) || true
  b=$(/usr/bin/perfgap check --root /tmp/pg-deb-tree.$$ --config /etc/perfgap/config.yaml --format json | masked) || true
  rm -rf /tmp/pg-deb-tree.$$
  [ "$a" = "$(masked < tests/golden/kvm-guest.json)" ] && [ "$a" = "$b" ] || { echo "installed perfgap: kvm-guest differs" >&2; return 1; }
  dpkg -r perfgap >/dev/null
  for f in /usr/bin/perfgap /usr/bin/perfgap-health /usr/bin/perfgap-gpu /usr/share/man/man1/perfgap.1 /usr/lib/systemd/system/perfgap.timer; do
    [ ! -e "$f" ] || { echo "dpkg -r left $f" >&2; return 1; }
  done
  [ -f /etc/perfgap/config.yaml ] || { echo "dpkg -r removed a conffile (purge's job)" >&2; return 1; }
  dpkg -P perfgap >/dev/null
  [ ! -e /etc/perfgap ] || { echo "dpkg -P left /etc/perfgap" >&2; return 1; }
  cleanup=()
  say "package: dpkg -i, run, -r (conffiles kept), -P (nothing left): clean"
}

total=$SECONDS
for s in "${steps[@]}"; do
  t=$SECONDS
  # Each step in its own subshell, so that set -e stops it at its first failing command and its
  # mounts and installed package are undone by its own exit trap.
  set +e
  (set -e; trap on_exit EXIT; "step_$s")
  rc=$?
  set -e
  if [ $rc = 0 ]; then say "$s passed in $((SECONDS - t))s"; else say "$s FAILED after $((SECONDS - t))s"; failed+=("$s"); fi
done
say "total $((SECONDS - total))s; ${#failed[@]} failed${failed:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
