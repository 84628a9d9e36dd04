#!/usr/bin/env bash
# A throw-away Slurm cluster on this host for the fan-out and health-check tests: munged with
# its own key and socket, slurmctld, and four slurmd (n1..n4 on 127.0.0.1, one port each),
# every file under one temporary directory.
#
#   tools/slurm-test-cluster.sh start [DIR]   prints DIR; DIR/env holds what the tests need
#   tools/slurm-test-cluster.sh stop DIR      stops every daemon it started, by PID
#
# Needs root (SlurmUser=root) and Debian's slurm-wlm and munge. Start waits (bounded) until
# sinfo shows the four nodes idle; on any failure it stops what it started and exits non-zero.
# PERFGAP_SLURM_HEALTH_PROGRAM, when set at start, becomes the HealthCheckProgram of every
# node (run by slurmd at its start, and every HealthCheckInterval seconds).
set -euo pipefail

NODES=(n1 n2 n3 n4)
START_WAIT_S=${PERFGAP_SLURM_START_WAIT_S:-60}

log() { echo "slurm-test-cluster: $*" >&2; }

stop_cluster() {
  local dir=$1
  [ -f "$dir/pids" ] || return 0
  local pid name
  # Newest first: the slurmds before slurmctld, munged last (they talk to it while stopping).
  while read -r pid name; do
    [ -n "$pid" ] || continue
    # Only a process that is still the daemon we started (a PID may have been reused).
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$name"; then
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done < <(tac "$dir/pids")
  local deadline=$((SECONDS + 10))
  while read -r pid name; do
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$name"; then
      log "$name (pid $pid) ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done <"$dir/pids"
  rm -f "$dir/pids"
}

# A free TCP port for each daemon: a base picked from the PID, moved on while any is taken.
pick_ports() {
  local base=$((20000 + ($$ % 2000) * 10)) taken
  taken=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u || true)
  while :; do
    local ok=1 p
    for p in $(seq "$base" $((base + ${#NODES[@]}))); do
      if grep -qx "$p" <<<"$taken"; then ok=0; break; fi
    done
    [ $ok = 1 ] && break
    base=$((base + 10))
  done
  echo "$base"
}

# Runs a daemon in the foreground of a background job so that its PID is known exactly.
spawn() {
  local dir=$1 name=$2; shift 2
  "$@" >>"$dir/log/$name.out" 2>&1 &
  echo "$! $name" >>"$dir/pids"
}

start_cluster() {
  local dir=$1
  mkdir -p "$dir"/{munge,ctld,log,run,bin,etc} "${NODES[@]/#/$dir/spool/}" "${NODES[@]/#/$dir/tmp/}"
  chmod 700 "$dir/munge"
  : >"$dir/pids"

  # munged: its own key, socket, pid and seed files, so that it never meets a system munged.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  local sock="$dir/munge/munge.socket"
  spawn "$dir" munged munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$sock" \
    --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" --log-file="$dir/log/munged.log"
  local deadline=$((SECONDS + 10))
  until [ -S "$sock" ]; do
    [ $SECONDS -lt $deadline ] || { log "munged did not create $sock"; return 1; }
    sleep 0.1
  done

  local base ctld_port
  base=$(pick_ports)
  ctld_port=$base
  local conf="$dir/etc/slurm.conf"
  {
    echo "# Written by tools/slurm-test-cluster.sh for the perfgap Slurm tests."
    echo "ClusterName=perfgapci"
    echo "SlurmctldHost=$(hostname -s)(127.0.0.1)"
    echo "SlurmctldPort=$ctld_port"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$sock"
    echo "CredType=cred/munge"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$dir/ctld"
    echo "SlurmdSpoolDir=$dir/spool/%n"
    # Per node: srun --mpi=pmix creates TmpFS/spmix_appdir_<uid>_<job>.<step> on every node of a
    # step, and the four nodes share one /tmp (the pair search's two-node steps collided there).
    echo "TmpFS=$dir/tmp/%n"
    echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
    echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "PlugStackConfig=$dir/etc/plugstack.conf"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "SchedulerType=sched/builtin"
    echo "MpiDefault=none"
    echo "SwitchType=switch/none"
    echo "JobCompType=jobcomp/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=300"
    echo "InactiveLimit=0"
    echo "KillWait=5"
    echo "MessageTimeout=10"
    if [ -n "${PERFGAP_SLURM_HEALTH_PROGRAM:-}" ]; then
      echo "HealthCheckProgram=$PERFGAP_SLURM_HEALTH_PROGRAM"
      echo "HealthCheckInterval=3600"
      echo "HealthCheckNodeState=ANY"
    fi
    local i=1 n
    for n in "${NODES[@]}"; do
      echo "NodeName=$n NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 Port=$((base + i)) CPUs=1 RealMemory=100 State=UNKNOWN"
      i=$((i + 1))
    done
    echo "PartitionName=ci Nodes=n[1-${#NODES[@]}] Default=YES MaxTime=INFINITE State=UP"
  } >"$conf"
  : >"$dir/etc/plugstack.conf"  # no SPANK plugins of the host (pyxis) in the test cluster
  export SLURM_CONF="$conf"

  spawn "$dir" slurmctld slurmctld -D -i -f "$conf"
  # Each slurmd in a UTS namespace of its own whose host name is its node name: the steps it
  # starts, and the ranks' "on HOST" lines in nccl-tests output, then tell the nodes apart.
  local own_uts=""
  if command -v unshare >/dev/null && unshare --uts true 2>/dev/null; then own_uts=1; fi
  for n in "${NODES[@]}"; do
    if [ -n "$own_uts" ]; then
      spawn "$dir" "slurmd -D -N $n" unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "$n" slurmd -D -N "$n" -f "$conf"
    else
      spawn "$dir" "slurmd -D -N $n" slurmd -D -N "$n" -f "$conf"
    fi
  done

  deadline=$((SECONDS + START_WAIT_S))
  local idle=""
  while :; do
    # %t is the compact state: "idle" only, not "drain" (drained idle nodes match -t idle).
    idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle" {print $1}' | sort -u | tr '\n' ' ' || true)
    [ "$idle" = "${NODES[*]} " ] && break
    if [ $SECONDS -ge $deadline ]; then
      log "nodes not idle after ${START_WAIT_S}s (idle: '${idle}')"
      sinfo -N -l >&2 || true
      tail -n 20 "$dir"/log/*.log >&2 || true
      return 1
    fi
    sleep 0.5
  done

  {
    echo "SLURM_CONF=$conf"
    echo "PERFGAP_SLURM_DIR=$dir"
    echo "PERFGAP_SLURM_NODES=${NODES[*]}"
    echo "PERFGAP_SLURM_PARTITION=ci"
  } >"$dir/env"
  log "up in ${SECONDS}s: ${NODES[*]} idle; env in $dir/env"
}

case "${1:-}" in
  start)
    dir=${2:-}
    [ -n "$dir" ] || dir=$(mktemp -d /tmp/perfgap-slurm.XXXXXX)
    for tool in munged slurmctld slurmd sinfo; do
      command -v "$tool" >/dev/null || { log "$tool not installed"; exit 1; }
    done
    [ "$(id -u)" = 0 ] || { log "needs root (the test cluster runs SlurmUser=root)"; exit 1; }
    if ! start_cluster "$dir"; then
      stop_cluster "$dir"
      exit 1
    fi
    echo "$dir"
    ;;
  stop)
    [ -n "${2:-}" ] || { log "usage: $0 stop DIR"; exit 2; }
    stop_cluster "$2"
    ;;
  *)
    echo "usage: $0 start [DIR] | stop DIR" >&2
    exit 2
    ;;
esac
