#!/usr/bin/env bash
# Unpacks Debian 12's arm64 -dev packages of the libraries the static perfgap links (yaml-cpp,
# zlib, pugixml, libarchive, sqlite3, zstd; the rest is header-only) into build-aarch64-sysroot/, for the
# release-aarch64 preset (tools/toolchain-aarch64.cmake). Needs the arm64 architecture in
# dpkg's list (tools/setup-debian.sh --release adds it) for apt-get download; installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build-aarch64-sysroot
# The header-only libraries (architecture-independent) are linked in from the host, so the
# cross compiler never needs the host's /usr/include (whose glibc headers are x86_64's).
link_headers() {
  local h
  for h in fmt nlohmann CLI tl rapidjson; do
    [ -e "/usr/include/$h" ] || { echo "aarch64-sysroot.sh: /usr/include/$h missing (tools/setup-debian.sh)" >&2; exit 2; }
    ln -sfn "/usr/include/$h" "$dest/usr/include/$h"
  done
}
# libzstd.a is the newest addition: a sysroot without it is unpacked again.
if [ -f "$dest/usr/lib/aarch64-linux-gnu/libsqlite3.a" ] && [ -f "$dest/usr/lib/aarch64-linux-gnu/libzstd.a" ]; then link_headers; exit 0; fi
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
(cd "$debs" && apt-get download -q libyaml-cpp-dev:arm64 zlib1g-dev:arm64 libpugixml-dev:arm64 libarchive-dev:arm64 libsqlite3-dev:arm64 libzstd-dev:arm64 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
ls "$debs"/*.deb >/dev/null
mkdir -p "$dest"
for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$dest"; done
link_headers
echo "arm64 libraries in $dest: $(cd "$dest/usr/lib/aarch64-linux-gnu" && ls ./*.a | tr '\n' ' ')"
