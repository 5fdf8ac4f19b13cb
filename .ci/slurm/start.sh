#!/usr/bin/env bash
# A one-node Slurm cluster on this machine for tests/slurm_cluster.rs: Debian's slurm-wlm and
# munge, the node being localhost with its CPUs. Run as root; stop it with stop.sh.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get install -y -qq slurm-wlm munge >/dev/null
fi
# Running daemons only: a stopped one may linger as a zombie until its parent reaps it.
running() { pgrep -x -r R,S,D "$1" >/dev/null; }
# The daemons this script starts, by PID, for stop.sh to stop those and no others.
started=/run/arbiter-ci-slurm.pids
: > "$started"
remember() { sleep 1; pgrep -x -r R,S,D "$1" >> "$started" || true; }
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))

# munge: the key Debian made, or a new one; its runtime folders.
mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
chmod 700 /etc/munge && chmod 400 /etc/munge/munge.key
running munged || { runuser -u munge -- /usr/sbin/munged && remember munged; }
munge -n | unmunge >/dev/null

mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=arbiter-ci
SlurmctldHost=${host}
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
JobRequeue=1
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
running slurmctld || { /usr/sbin/slurmctld && remember slurmctld; }
# slurmd initialises a cgroup plugin even with proctrack/linuxproc and task/none; which one a
# container offers varies, so each is tried until slurmd stays up.
for plugin in autodetect cgroup/v1 cgroup/v2; do
  running slurmd && break
  printf 'CgroupPlugin=%s\nCgroupAutomount=yes\nIgnoreSystemd=yes\n' "$plugin" > /etc/slurm/cgroup.conf
  /usr/sbin/slurmd || true
  sleep 1
  running slurmd && remember slurmd
done
for _ in $(seq 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -q idle; then
    sinfo
    exit 0
  fi
  sleep 1
done
echo "error: the Slurm node did not become idle" >&2
sinfo -N -l >&2 || true
tail -n 30 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
