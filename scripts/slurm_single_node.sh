#!/usr/bin/env bash
# A real single-node Slurm on this machine, for `profconv grade --executor slurm` (CI and trying it out).
#
#   bash scripts/slurm_single_node.sh up       # install if missing, configure, start munged, slurmctld, slurmd
#   bash scripts/slurm_single_node.sh status   # sinfo, the node's state
#   bash scripts/slurm_single_node.sh down     # stop the daemons (configuration and state are kept)
#   bash scripts/slurm_single_node.sh purge    # down, then remove the configuration and state this script wrote
#
# Debian/Ubuntu: installs slurm-wlm and munge with apt when slurmctld is missing (needs root). In a container
# there is no systemd and no cgroup hierarchy to delegate: the daemons run as root in the background,
# ProctrackType=proctrack/linuxproc (processes by parent id), TaskPlugin=task/none, no accounting database
# (profconv's Slurm executor reads job states from squeue). The node has this machine's CPUs and memory;
# GPUs (nvidia-smi) become a gres `gpu` and a partition `gpu`, otherwise there is only the partition `cpu`.
# Partitions: cpu (default) and, with GPUs, gpu; node features `profconv` and the GPU's name (lower case,
# for --constraint). Limits kept short for tests: a job's time limit is enforced within ~30 s
# (OverTimeLimit=0, KillWait=5); a job on a node set DOWN is requeued (JobRequeue=1).
# Environment: SLURM_CONF_DIR (default /etc/slurm), SLURM_STATE (default /var/spool/slurm-profconv),
# SLURM_CPUS (default: nproc) -- a node may declare more CPUs than it has (config_overrides), so that
# jobs asking for --cpus-per-task 4 fit on a 2-core machine.
set -euo pipefail
CONF_DIR=${SLURM_CONF_DIR:-/etc/slurm}
STATE=${SLURM_STATE:-/var/spool/slurm-profconv}
CPUS=${SLURM_CPUS:-$(nproc)}
HOST=$(hostname -s)
LOG=$STATE/log
say() { echo "slurm_single_node: $*"; }

install() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
    return
  fi
  command -v apt-get >/dev/null || { say "slurmctld is missing and there is no apt-get: install Slurm and munge"; exit 2; }
  say "installing slurm-wlm and munge (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
}

gpus() { command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true; }

configure() {
  mkdir -p "$CONF_DIR" "$STATE/ctld" "$STATE/d" "$LOG"
  local mem ngpu gpu_name features gres_line gpu_part
  mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
  ngpu=$(gpus | grep -c . || true)
  features="profconv"
  gres_line=""
  gpu_part=""
  : > "$CONF_DIR/gres.conf"
  if [ "$ngpu" -gt 0 ]; then
    gpu_name=$(gpus | head -1 | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[A-Z]+[0-9]+/) { print tolower($i); exit } }')
    features="profconv,${gpu_name:-gpu}"
    gres_line=" Gres=gpu:${gpu_name:-gpu}:$ngpu"
    gpu_part="PartitionName=gpu Nodes=$HOST MaxTime=INFINITE State=UP"
    for i in $(seq 0 $((ngpu - 1))); do
      echo "NodeName=$HOST Name=gpu Type=${gpu_name:-gpu} File=/dev/nvidia$i" >> "$CONF_DIR/gres.conf"
    done
  fi
  cat > "$CONF_DIR/slurm.conf" <<EOF
# written by profconv's scripts/slurm_single_node.sh
ClusterName=profconv
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
ReturnToService=2
JobRequeue=1
KillWait=5
OverTimeLimit=0
MinJobAge=300
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=10
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000
NodeName=$HOST CPUs=$CPUS RealMemory=$mem Features=$features State=UNKNOWN$gres_line
PartitionName=cpu Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
$gpu_part
EOF
  [ "$CONF_DIR" = /etc/slurm ] || export SLURM_CONF="$CONF_DIR/slurm.conf"
}

start_munge() {
  if munge -n >/dev/null 2>&1; then return; fi
  [ -s /etc/munge/munge.key ] || { mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
  chmod 0700 /etc/munge /var/log/munge /var/lib/munge
  chmod 0600 /etc/munge/munge.key
  chmod 0755 /run/munge
  if [ "$(id -u)" = 0 ]; then
    su -s /bin/sh munge -c munged || munged --force
  else
    munged
  fi
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && return; sleep 0.1; done
  say "munged did not start"; exit 1
}

wait_idle() {
  for _ in $(seq 120); do
    state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null | head -1 || true)
    case "$state" in idle|mixed|allocated) say "node $HOST is $state"; return 0;; esac
    sleep 0.5
  done
  say "the node did not become idle (state: ${state:-none}); logs in $LOG"; tail -20 "$LOG/slurmctld.log" "$LOG/slurmd.log" || true
  exit 1
}

up() {
  install
  configure
  start_munge
  running "$STATE/slurmctld.pid" || slurmctld -f "$CONF_DIR/slurm.conf"
  running "$STATE/slurmd.pid" || slurmd -f "$CONF_DIR/slurm.conf"
  for _ in $(seq 60); do scontrol -o ping 2>/dev/null | grep -q UP && break; sleep 0.5; done
  scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true
  wait_idle
  sinfo
}

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

down() {
  scontrol shutdown >/dev/null 2>&1 || true
  for d in slurmd slurmctld; do  # by the pid files this configuration names: never another Slurm's daemons
    pid="$STATE/$d.pid"
    for _ in $(seq 40); do running "$pid" || break; sleep 0.25; done
    if running "$pid"; then kill "$(cat "$pid")" 2>/dev/null || true; fi
  done
  say "slurmctld and slurmd stopped (munged left running)"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  status) sinfo; scontrol show node "$HOST" | head -8 ;;
  purge) down; rm -rf "$STATE" "$CONF_DIR/slurm.conf" "$CONF_DIR/gres.conf"; say "configuration and state removed" ;;
  *) echo "usage: $0 up|status|down|purge" >&2; exit 2 ;;
esac
