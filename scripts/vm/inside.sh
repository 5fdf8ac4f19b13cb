#!/bin/bash
# Inside the machine scripts/vm-check boots: arbiter's limits, freezer and sandbox checks, as
# root from a group busy with other processes (as from a login shell), and as a normal user in
# the scope systemd delegates to them. Writes /var/log/arbiter-vm-check.txt, ending in
# "RESULT: PASS" or "RESULT: FAIL".
set -u
log=/var/log/arbiter-vm-check.txt
exec > >(tee "$log") 2>&1
repo=$(cat /opt/arbiter-vm/repo)
arbiter=$repo/target/debug/arbiter
engine=$repo/target/debug/arbiter-engine
failed=0

echo "machine: $(uname -r), $(nproc) CPUs, /sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup)"
echo "systemd: $(systemctl --version | head -1)"
echo "root's controllers: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
echo "bubblewrap: $(bwrap --version)"

# How each user starts arbiter: root from this service's group, which holds other processes
# as a login shell's does; the user in a delegated scope of their own user manager.
as() {
  local who=$1; shift
  if [ "$who" = root ]; then
    "$@"
  else
    runuser -u player -- env HOME=/home/player XDG_RUNTIME_DIR=/run/user/1000 \
      DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus \
      systemd-run --user --scope -p Delegate=yes --quiet "$@"
  fi
}

check() {
  local name=$1; shift
  echo "--- $name"
  if "$@"; then echo "ok: $name"; else echo "FAILED: $name"; failed=$((failed + 1)); fi
}

# The banner of a match with every limit asked for: each must be said to hold, by cgroup v2.
banner() {
  local who=$1 dir
  dir=$(as "$who" mktemp -d)
  as "$who" cp "$engine" "$dir/e"
  (cd "$dir" && as "$who" "$arbiter" match --games 2 --each depth=1 --out run \
      --engine cmd=./e name=a memory=256M processes=64 threads=1 freeze=on \
      --engine cmd=./e name=b) > "$dir.out" 2>&1
  local rc=$?
  grep -E '^(sandbox|limits|freez|  )' "$dir.out" | head -8
  [ $rc = 0 ] || { tail -5 "$dir.out"; return 1; }
  grep -q 'cgroup v2' "$dir.out" && grep -q '256 MiB' "$dir.out"
}

# A user outside any group of their own (started from a system service here, as from a job
# whose group belongs to root): no control group, so memory is capped per process and the
# banner says which limits hold (memory and processes by rlimits); freezing, which needs a
# group, is refused.
undelegated() {
  local dir
  dir=$(runuser -u player -- mktemp -d)
  runuser -u player -- cp "$engine" "$dir/e"
  (cd "$dir" && runuser -u player -- env HOME=/home/player "$arbiter" match --games 2 \
      --each depth=1 --out run --engine cmd=./e name=a memory=256M --engine cmd=./e name=b) \
      > "$dir.out" 2>&1 || { tail -5 "$dir.out"; return 1; }
  grep -E '^sandbox' "$dir.out"
  grep -q 'RLIMIT_DATA' "$dir.out" && grep -q 'RLIMIT_NPROC' "$dir.out" || return 1
  (cd "$dir" && runuser -u player -- env HOME=/home/player "$arbiter" match --games 2 \
      --each depth=1 --out run2 --engine cmd=./e name=a freeze=on --engine cmd=./e name=b) \
      > "$dir.out" 2>&1
  local rc=$?
  tail -1 "$dir.out"
  [ $rc = 2 ] && [ ! -e "$dir/run2" ]
}

# One test of the repository's own, by name.
run_test() {
  local who=$1 file=$2 name=$3
  (cd "$repo" && as "$who" /opt/arbiter-vm/all --include-ignored --exact --test-threads 1 \
      --nocapture "$file::$name") > /tmp/test.out 2>&1
  local rc=$?
  grep -E "^test |spinner|panicked|assert" /tmp/test.out | head -12
  return $rc
}

for who in root player; do
  echo
  echo "===== as $who"
  check "$who: the banner says every limit holds" banner "$who"
  check "$who: a fork storm stops at processes=" run_test "$who" sandbox an_engine_cannot_write_the_run_read_its_opponent_dial_out_or_storm
  check "$who: an engine over memory= loses for it" run_test "$who" sandbox an_engine_over_its_memory_limit_loses_for_that
  check "$who: threads= caps the CPU" run_test "$who" sandbox an_engine_gets_the_cpu_its_threads_setting_allows
  check "$who: memory= under cgroup v2" run_test "$who" sandbox memory_under_cgroup_v2_is_kept_or_refused_naming_the_controller
  check "$who: the CPU thief is frozen (freeze=on)" run_test "$who" cheaters an_engine_gets_no_cpu_on_its_opponents_time
  check "$who: the CPU thief is caught and frozen (freeze=watch)" run_test "$who" cheaters a_watched_engine_is_frozen_once_caught_using_cpu_on_its_opponents_time
  check "$who: a cheat that waits for the run changes nothing" run_test "$who" cheaters a_cheat_that_waits_for_the_run_changes_nothing_of_it_nor_its_opponent
done

echo
echo "===== as player, outside any group of their own"
check "player without a delegated group: the banner says what holds" undelegated

echo
if [ $failed = 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL ($failed failed)"; fi
sync
