#!/usr/bin/env bash
# Runs perfgap in a real container for tests/cli/test_real_containers.cpp, everything inside a
# private mount namespace of its own (nothing of this machine's /etc or mounts is changed):
#
#   real_container.sh RUNTIME ROOTFS PERFGAP WORK CARRY [PERFGAP-ARGS...]
#
# RUNTIME  host        this machine, /etc overlaid (privately) with /etc/nccl/topo.xml, and
#                      NCCL_TOPO_FILE=/etc/nccl/topo.xml in the environment: the public case's host
#          bwrap       bubblewrap, its own PID namespace, ROOTFS (an overlay copy) as /
#          runc        runc run on an OCI bundle (runc spec) whose rootfs is the overlay copy
#          enroot      enroot's mechanism: unshare + chroot into the overlay copy, what reaches
#                      it decided by the host's /etc/enroot/environ.d/*.env and mounts.d/*.fstab
#                      lines (written here from CARRY), read the way enroot reads them
# ROOTFS   a Debian minbase (debootstrap; tools/release-check.sh chroots), never written to
# PERFGAP  the binary, bound read-only at /usr/local/bin/perfgap (a dynamic one also gets this
#          machine's /usr/lib/x86_64-linux-gnu bound over the image's: PG_HOST_LIBS=1)
# WORK     a directory for the overlay layers and bundle; WORK/topo.xml is the topology file,
#          WORK/out is /out inside (reports, the host baseline)
# CARRY    none | var | file | both: whether NCCL_TOPO_FILE and /etc/nccl/topo.xml reach the
#          container
# perfgap's output and exit status are this script's; setup failures exit 97 with one line.
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: real_container.sh RUNTIME ROOTFS PERFGAP WORK CARRY [ARGS...]" >&2; exit 97; }
runtime=$1 rootfs=$2 perfgap=$3 work=$4 carry=$5
shift 5
die() { echo "real_container.sh: $*" >&2; exit 97; }
if [ -z "${PG_REAL_CONTAINER_NS:-}" ]; then
  exec env PG_REAL_CONTAINER_NS=1 unshare --mount --propagation private -- "$0" "$runtime" "$rootfs" "$perfgap" "$work" "$carry" "$@"
fi
topo=$work/topo.xml
[ -f "$topo" ] || die "no $topo"
mkdir -p "$work/out"
run=$(mktemp -d "$work/run.XXXXXX")
carry_var=0 carry_file=0
case $carry in none) ;; var) carry_var=1 ;; file) carry_file=1 ;; both) carry_var=1 carry_file=1 ;; *) die "CARRY: $carry" ;; esac

# The host's view (this namespace): /etc overlaid privately with the topology file and,
# for enroot, its configuration.
mkdir -p "$run/etc-up" "$run/etc-work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$run/etc-up,workdir=$run/etc-work" /etc || die "cannot overlay /etc"
mkdir -p /etc/nccl
cp "$topo" /etc/nccl/topo.xml
export NCCL_TOPO_FILE=/etc/nccl/topo.xml

# The host run starts from a clean environment (what the job's would be, not the test runner's).
if [ "$runtime" = host ]; then exec env -i PATH="$PATH" HOME=/root NCCL_TOPO_FILE="$NCCL_TOPO_FILE" "$perfgap" "$@"; fi

# The container's root: a private, writable overlay copy of ROOTFS.
root=$run/root
mkdir -p "$run/up" "$run/work" "$root"
mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$run/up,workdir=$run/work" "$root" || die "cannot overlay $rootfs"
mkdir -p "$root/out" "$root/usr/local/bin"
touch "$root/usr/local/bin/perfgap"
path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
libdir=/usr/lib/x86_64-linux-gnu

case $runtime in
  bwrap)
    args=(bwrap --bind "$root" / --proc /proc --dev /dev --ro-bind /sys /sys --unshare-pid --die-with-parent
          --bind "$work/out" /out --ro-bind "$perfgap" /usr/local/bin/perfgap --clearenv --setenv PATH "$path")
    [ "${PG_HOST_LIBS:-0}" = 1 ] && args+=(--ro-bind "$libdir" "$libdir")
    if [ $carry_file = 1 ]; then mkdir -p "$root/etc/nccl"; args+=(--ro-bind "$topo" /etc/nccl/topo.xml); fi
    [ $carry_var = 1 ] && args+=(--setenv NCCL_TOPO_FILE /etc/nccl/topo.xml)
    exec "${args[@]}" /usr/local/bin/perfgap "$@"
    ;;
  runc)
    bundle=$run/bundle
    mkdir -p "$bundle"
    (cd "$bundle" && runc spec) || die "runc spec failed"
    if [ $carry_file = 1 ]; then mkdir -p "$root/etc/nccl"; touch "$root/etc/nccl/topo.xml"; fi
    PG_ROOT=$root PG_PERFGAP=$perfgap PG_OUT=$work/out PG_TOPO=$topo PG_CARRY_VAR=$carry_var PG_CARRY_FILE=$carry_file \
    PG_LIBDIR=$libdir PG_PATH=$path python3 - "$bundle/config.json" "$@" <<'PY' || exit 97
import json, os, sys
path, args = sys.argv[1], sys.argv[2:]
c = json.load(open(path))
c["root"] = {"path": os.environ["PG_ROOT"], "readonly": False}
p = c["process"]
p["terminal"] = False
p["args"] = ["/usr/local/bin/perfgap"] + args
p["env"] = ["PATH=" + os.environ["PG_PATH"]]
if os.environ["PG_CARRY_VAR"] == "1":
    p["env"].append("NCCL_TOPO_FILE=/etc/nccl/topo.xml")
def bind(src, dst, ro=True):
    c["mounts"].append({"destination": dst, "type": "bind", "source": src, "options": ["rbind", "ro" if ro else "rw"]})
bind(os.environ["PG_PERFGAP"], "/usr/local/bin/perfgap")
bind(os.environ["PG_OUT"], "/out", ro=False)
if os.environ.get("PG_HOST_LIBS") == "1":
    bind(os.environ["PG_LIBDIR"], os.environ["PG_LIBDIR"])
if os.environ["PG_CARRY_FILE"] == "1":
    bind(os.environ["PG_TOPO"], "/etc/nccl/topo.xml")
json.dump(c, open(path, "w"), indent=1)
PY
    exec runc --root "$run/runc-state" run --bundle "$bundle" "pg-$(basename "$run" | tr -dc 'a-zA-Z0-9')"
    ;;
  enroot)
    # The site's enroot configuration on the host, as an administrator writes it.
    mkdir -p /etc/enroot/environ.d /etc/enroot/mounts.d
    [ $carry_var = 1 ] && echo "NCCL_TOPO_FILE" > /etc/enroot/environ.d/50-nccl-topo.env
    [ $carry_file = 1 ] && echo "/etc/nccl/topo.xml /etc/nccl/topo.xml none x-create=file,bind,ro,nosuid,nodev" > /etc/enroot/mounts.d/50-nccl-topo.fstab
    # enroot start: the container's environment is built from environ.d (NAME takes the
    # host's value, NAME=VALUE sets one), its mounts from mounts.d fstab lines.
    envs=(PATH="$path")
    for f in /etc/enroot/environ.d/*.env; do
      [ -f "$f" ] || continue
      while IFS= read -r line; do
        case $line in ''|'#'*) continue ;; *=*) envs+=("$line") ;; *) [ -n "${!line:-}" ] && envs+=("$line=${!line}") ;; esac
      done < "$f"
    done
    for f in /etc/enroot/mounts.d/*.fstab; do
      [ -f "$f" ] || continue
      while read -r src dst _type opts _rest; do
        case $src in ''|'#'*) continue ;; esac
        if [[ $opts == *x-create=file* ]]; then mkdir -p "$(dirname "$root$dst")"; touch "$root$dst"; else mkdir -p "$root$dst"; fi
        mount --bind "$src" "$root$dst"
        [[ ,$opts, == *,ro,* ]] && mount -o remount,bind,ro "$root$dst"
      done < "$f"
    done
    mount --bind "$perfgap" "$root/usr/local/bin/perfgap"
    [ "${PG_HOST_LIBS:-0}" = 1 ] && mount --bind "$libdir" "$root$libdir"
    mount --bind "$work/out" "$root/out"
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    exec env -i "${envs[@]}" chroot "$root" /usr/local/bin/perfgap "$@"
    ;;
  *) die "RUNTIME: $runtime" ;;
esac
