#!/usr/bin/env bash
# Starts a single-node Slurm cluster on this machine for tests: munged, slurmctld and slurmd, all
# as root, everything (key, socket, config, state, spool, logs) under DIR, on two free ports.
#   usage: source start-cluster.sh DIR   then: SLURM_CONF is exported; stop_cluster stops it.
# On failure cluster_error holds the precise reason and start_cluster returns 1; the caller skips.
# The node offers 4 fake GPUs (gres.conf names /dev/null four times: Slurm schedules them and
# sets CUDA_VISIBLE_DEVICES, there is no GPU behind them), so that the tests submit with the default --gres=gpu:1 and exercise that line.
# With LABKIT_SLURM_GPUS=real it offers the machine's own GPUs (/dev/nvidia0, 1, ...) instead;
# LABKIT_SLURM_GPU_COUNT=K then declares only the first K of them (K = 1: a one-GPU node).
# Each task is bound to the CPUs Slurm gave it (task/affinity), so that two tasks never share a
# CPU and the judge's CPU split inside a task (sched_getaffinity) sees only the task's CPUs. With
# real GPUs it first tries device cgroups (task/cgroup, ConstrainDevices=yes: a task cannot open
# another task's GPU), where the machine lets slurmd write cgroups; else (a container, a read-only
# cgroup tree) the GPUs are kept apart by CUDA_VISIBLE_DEVICES only, which CUDA honours but a
# process that opens /dev/nvidiaN by hand does not. cluster_binding says which one runs;
# LABKIT_SLURM_BINDING=cgroup|affinity|none forces one.

cluster_error=
cluster_binding=
cluster_pids=()

# The last two errors of Slurm logs, without the noise of a first start (no state files yet, no
# PMIx library, no mail program).
last_errors() {
  cat "$@" 2>/dev/null | grep -E "error|fatal" | grep -vE "state file|backup state|pmix|PMIx|MPI|MailProg|Jobs may be lost" \
    | tail -n 2 | tr '\n' ' '
}

# For the test scripts: a temporary folder $tmp (mktemp PREFIX), failures counted by fail(), and
# on exit the cluster stopped, $tmp/out copied to KEEP when one is named, and $tmp removed.
#   usage: cluster_test_begin PREFIX [KEEP]
cluster_test_begin() {
  tmp=$(mktemp -d "/tmp/$1.XXXXXX") keep=${2:-} failures=0
  trap cluster_test_end EXIT
}
cluster_test_end() {
  stop_cluster
  [[ -n $keep ]] && rm -rf "$keep" && cp -r "$tmp/out" "$keep"
  rm -rf "$tmp"
}
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

stop_cluster() {
  local pid
  for pid in "${cluster_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${cluster_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  cluster_pids=()
}

start_cluster() {
  local dir=$1 b
  for b in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
    command -v "$b" >/dev/null || { cluster_error="$b not found (apt-get install munge slurmctld slurmd slurm-client; tools/slurm/install-test-deps.sh)"; return 1; }
  done
  [[ $(id -u) -eq 0 ]] || { cluster_error="not root: slurmd must run as root to start jobs"; return 1; }
  mkdir -p "$dir"/{munge,etc,state,spool,log} && chmod 700 "$dir" "$dir/munge"
  # munge: a fresh key, its own socket.
  head -c 1024 /dev/urandom >"$dir/munge/munge.key" && chmod 400 "$dir/munge/munge.key"
  local sock=$dir/munge/munge.socket
  munged --force --key-file="$dir/munge/munge.key" --socket="$sock" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" >"$dir/log/munged.out" 2>&1
  for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
  if [[ ! -S $sock ]]; then
    cluster_error="munged would not start: $(cat "$dir/log/munged.out" "$dir/log/munged.log" 2>/dev/null | tail -n 2 | tr '\n' ' ')"
    return 1
  fi
  cluster_pids+=("$(cat "$dir/munge/munged.pid")")

  # Two free TCP ports (bound, then released: a race with other programs is possible but rare).
  local ports host cpus mem_mb
  ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))') || { cluster_error="no free TCP port"; return 1; }
  read -r ctld_port slurmd_port <<<"$ports"
  host=$(hostname -s) cpus=$(nproc)
  local ngpus=4 gpu_files
  if [[ ${LABKIT_SLURM_GPUS:-fake} == real ]]; then
    gpu_files=$(ls /dev/nvidia[0-9]* 2>/dev/null | sort -V | head -n "${LABKIT_SLURM_GPU_COUNT:-64}")
    ngpus=$(wc -w <<<"$gpu_files")
    ((ngpus > 0)) || { cluster_error="LABKIT_SLURM_GPUS=real, but no /dev/nvidia0"; return 1; }
  fi
  mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
  local modes=(affinity none)
  if [[ -n ${gpu_files:-} ]] && mkdir /sys/fs/cgroup/labkit-probe.$$ 2>/dev/null; then
    rmdir /sys/fs/cgroup/labkit-probe.$$
    modes=(cgroup affinity none)
  fi
  [[ -n ${LABKIT_SLURM_BINDING:-} ]] && modes=("$LABKIT_SLURM_BINDING")
  local mode errors=
  for mode in "${modes[@]}"; do
    write_slurm_conf "$dir" "$mode"
    if start_daemons "$dir" && { [[ $mode != cgroup ]] || probe_job "$dir"; }; then
      cluster_binding=$mode
      case $mode in
        cgroup) cluster_binding="cgroup: CPUs and GPU devices constrained per task (task/cgroup, ConstrainDevices=yes)" ;;
        affinity) cluster_binding="task/affinity: CPUs bound per task; GPUs kept apart by CUDA_VISIBLE_DEVICES only (no device cgroup)" ;;
        none) cluster_binding="task/none: neither CPUs nor GPU devices bound (CUDA_VISIBLE_DEVICES only)" ;;
      esac
      return 0
    fi
    errors+="[$mode] $cluster_error "
    stop_daemons "$dir"
  done
  cluster_error=$errors
  return 1
}

# slurm.conf (and cgroup.conf, gres.conf) for one binding mode: cgroup, affinity or none.
write_slurm_conf() {
  local dir=$1 mode=$2 proctrack=proctrack/linuxproc task=task/none
  case $mode in
    cgroup) proctrack=proctrack/cgroup task=task/cgroup,task/affinity ;;
    affinity) task=task/affinity ;;
  esac
  cat >"$dir/etc/slurm.conf" <<EOF
# A one-node test cluster (tests/slurm/start-cluster.sh).
ClusterName=labkittest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$proctrack
TaskPlugin=$task
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
ReturnToService=2
MaxArraySize=1001
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb Gres=gpu:$ngpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  if [[ -n ${gpu_files:-} ]]; then
    local f
    for f in $gpu_files; do echo "NodeName=$host Name=gpu File=$f"; done >"$dir/etc/gres.conf"
  else
    # Fake GPUs: Slurm wants a character device per GPU; /dev/null stands in.
    mkdir -p "$dir/dev" && for i in 0 1 2 3; do ln -sf /dev/null "$dir/dev/gpu$i"; done
    echo "NodeName=$host Name=gpu File=$dir/dev/gpu[0-3]" >"$dir/etc/gres.conf"
  fi
  # Where slurmd cannot set up cgroups its default way (no systemd, a read-only cgroup2 tree), the
  # caller may name a cgroup.conf for it, e.g. LABKIT_SLURM_CGROUP='IgnoreSystemd=yes'.
  # The cgroup mode writes its own (where it does not work, the next mode uses the caller's).
  rm -f "$dir/etc/cgroup.conf"
  if [[ $mode == cgroup ]]; then
    printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\nConstrainCores=yes\nConstrainDevices=yes\n' >"$dir/etc/cgroup.conf"
  elif [[ -n ${LABKIT_SLURM_CGROUP:-} ]]; then
    printf '%b\n' "$LABKIT_SLURM_CGROUP" >"$dir/etc/cgroup.conf"
  fi
  return 0
}

# A job of one GPU must run to its end (a cgroup setup may start slurmd, then fail every step);
# the GPUs it saw go to log/probe.out.
probe_job() {
  local dir=$1 job
  job=$(sbatch --parsable --gres=gpu:1 -o "$dir/log/probe.out" \
    --wrap 'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES SLURM_JOB_GPUS=$SLURM_JOB_GPUS"; nvidia-smi -L; echo probe-done' 2>&1) \
    || { cluster_error="probe job: sbatch: $job"; return 1; }
  for _ in $(seq 60); do
    [[ -z $(squeue -h -j "$job" 2>/dev/null) ]] && break
    sleep 0.5
  done
  grep -q probe-done "$dir/log/probe.out" 2>/dev/null && return 0
  cluster_error="probe job $job did not run to its end: $(tail -n 2 "$dir/log/probe.out" 2>/dev/null | tr '\n' ' ') $(last_errors "$dir/log/slurmd.log")"
  scancel "$job" 2>/dev/null
  return 1
}

# The daemons of one slurm.conf; 1 with cluster_error set when slurmd does not come up idle.
slurm_pids=()
stop_daemons() {
  local pid
  for pid in "${slurm_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${slurm_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  slurm_pids=()
  rm -rf "${1:-/nonexistent}/state"/* 2>/dev/null
}
start_daemons() {
  local dir=$1
  export SLURM_CONF=$dir/etc/slurm.conf
  slurmctld -D -i -f "$SLURM_CONF" >>"$dir/log/slurmctld.out" 2>&1 &
  slurm_pids+=($!)
  cluster_pids+=($!)
  slurmd -D -f "$SLURM_CONF" >>"$dir/log/slurmd.out" 2>&1 &
  local slurmd_pid=$!
  slurm_pids+=($slurmd_pid)
  cluster_pids+=($slurmd_pid)
  local state=
  for _ in $(seq 60); do
    state=$(sinfo -h -N -o %T 2>/dev/null | head -1)
    [[ $state == idle ]] && return 0
    kill -0 "$slurmd_pid" 2>/dev/null || break  # slurmd gave up: no use waiting
    sleep 1
  done
  cluster_error="slurmd did not register as idle within 60 s (sinfo: '${state:-no answer}'); slurmctld: $(last_errors "$dir/log/slurmctld.log") slurmd: $(last_errors "$dir/log/slurmd.log" "$dir/log/slurmd.out")"
  : >"$dir/log/slurmd.log"  # the next try's errors are its own
  return 1
}
