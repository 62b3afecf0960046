#!/usr/bin/env bash
# cluster.sh - a throw-away single-node Slurm cluster on loopback, for tests.
#
#   tests/slurm/cluster.sh start DIR   write DIR/{munge,slurm.conf,...}, start
#                                      munged, slurmctld and slurmd, wait until
#                                      the node is idle, print export lines
#   tests/slurm/cluster.sh env DIR     print the export lines again
#   tests/slurm/cluster.sh stop DIR    scancel everything, stop the daemons,
#                                      wait until they are gone
#
# DIR is a fresh directory the caller owns (mktemp -d); everything (keys,
# sockets, state, spool, logs, pid files) lives under it and nothing under
# /etc is read or written.  Meant to run as root (SlurmUser=root) in a
# container without systemd or cgroups.  Typical use:
#
#   d=$(mktemp -d); trap 'tests/slurm/cluster.sh stop "$d"' EXIT
#   envs=$(tests/slurm/cluster.sh start "$d")   # not eval "$(...)": that
#   eval "$envs"                                # would hide a failed start
#   sbatch --array=0-3 ...
#
# `stop` is safe to call twice and after a failed `start`.  See NOTES.md.
set -euo pipefail

START_TIMEOUT=${KJ_SLURM_START_TIMEOUT:-60}
STOP_TIMEOUT=${KJ_SLURM_STOP_TIMEOUT:-30}

die() { printf 'cluster.sh: %s\n' "$*" >&2; exit 1; }
say() { printf 'cluster.sh: %s\n' "$*" >&2; }

usage() { die "usage: cluster.sh start|stop|env DIR"; }

[ $# -eq 2 ] || usage
cmd=$1
dir=$2
[ -d "$dir" ] || die "$dir: not a directory"
dir=$(cd "$dir" && pwd -P)
conf=$dir/slurm.conf
sock=$dir/munge/munge.socket

print_env() {
	[ -f "$conf" ] || die "$conf: no such file (was the cluster started?)"
	printf 'export SLURM_CONF=%q\n' "$conf"
	# The Slurm clients find munged's socket through AuthInfo=socket= in
	# slurm.conf; this one is for the munge/unmunge command-line tools
	# (`munge --socket="$KJ_MUNGE_SOCKET"`), which have no variable of their own.
	printf 'export KJ_MUNGE_SOCKET=%q\n' "$sock"
}

# A TCP port nothing listens on; the kernel picks it.
free_port() {
	python3 - <<'EOF' 2>/dev/null && return 0
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
EOF
	# Fallback without python: a random high port that ss does not show.
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

pid_of() { # pid_of FILE -> pid if the file names a live process
	local f=$1 p
	[ -s "$f" ] || return 1
	p=$(head -n1 "$f" | tr -dc 0-9)
	[ -n "$p" ] && alive "$p" && echo "$p"
}

show_logs() {
	local f
	for f in "$dir"/log/*.log "$dir"/log/*.out; do
		[ -f "$f" ] || continue
		printf '==== %s (last 40 lines)\n' "$f" >&2
		tail -n 40 "$f" >&2 || true
	done
}

node_state() {
	SLURM_CONF=$conf timeout 10 sinfo -h -N -o '%t' 2>/dev/null | head -n1 || true
}

start() {
	[ ! -e "$conf" ] || die "$dir already holds a cluster (slurm.conf exists); use a fresh directory"
	local node cpus mem boards sockets cores threads
	node=$(hostname -s)
	getent hosts "$node" >/dev/null || die "hostname $node does not resolve"
	# slurmd -C: NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105
	local hw
	hw=$(slurmd -C | head -n1)
	getv() { sed -n "s/.*\\<$1=\\([0-9]*\\).*/\\1/p" <<<"$hw"; }
	cpus=$(getv CPUs)
	boards=$(getv Boards)
	sockets=$(getv SocketsPerBoard)
	cores=$(getv CoresPerSocket)
	threads=$(getv ThreadsPerCore)
	mem=$(getv RealMemory)
	[ -n "$cpus" ] && [ -n "$mem" ] || die "cannot parse 'slurmd -C': $hw"

	mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" "$dir/run"
	chmod 0755 "$dir/munge"
	# munged refuses a key that is group/world readable or not owned by us.
	dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
	chmod 0400 "$dir/munge/munge.key"

	local ctld_port slurmd_port
	ctld_port=$(free_port) || die "no free port"
	slurmd_port=$(free_port) || die "no free port"
	while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done

	cat >"$conf" <<EOF
# Written by tests/slurm/cluster.sh; a single-node cluster on loopback.
ClusterName=kjtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: also how long a requeued job waits before it may start again
# (default 120s, which would make every requeue test take two minutes).
AuthInfo=socket=$sock,cred_expire=${KJ_SLURM_CRED_EXPIRE:-10}
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups in the container: track processes through /proc, bind nothing.
ProctrackType=${KJ_SLURM_PROCTRACK:-proctrack/linuxproc}
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
# Cores are the consumable, so several 1-CPU array tasks run at once.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
KillWait=5
MinJobAge=10
JobRequeue=1
InactiveLimit=0
Waittime=0
SlurmctldTimeout=30
SlurmdTimeout=30
# No slurmdbd/MySQL: no accounting storage (sacct cannot answer, see NOTES.md);
# finished jobs are written one line each to a text file instead.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus Boards=${boards:-1} SocketsPerBoard=${sockets:-1} CoresPerSocket=${cores:-$cpus} ThreadsPerCore=${threads:-1} RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

	# munged: everything under DIR.  --force: without it munged refuses a
	# socket whose parent directories lack o+x, and mktemp -d makes DIR 0700.
	KJ_SLURM_CLUSTER=$dir munged --socket="$sock" --key-file="$dir/munge/munge.key" \
		--pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
		--seed-file="$dir/munge/munged.seed" --force </dev/null ||
		{ show_logs; die "munged did not start"; }
	for _ in $(seq 50); do
		[ -S "$sock" ] && break
		sleep 0.1
	done
	[ -S "$sock" ] || { show_logs; die "munged: no socket $sock"; }
	munge --socket="$sock" -n | unmunge --socket="$sock" >/dev/null ||
		{ show_logs; die "munge round trip failed"; }

	# -i: ignore (absent) saved state.  Both daemonize and write their pid files.
	KJ_SLURM_CLUSTER=$dir slurmctld -f "$conf" -i </dev/null >>"$dir/log/slurmctld.out" 2>&1 ||
		{ show_logs; die "slurmctld did not start"; }
	KJ_SLURM_CLUSTER=$dir slurmd -f "$conf" -N "$node" </dev/null >>"$dir/log/slurmd.out" 2>&1 ||
		{ show_logs; die "slurmd did not start"; }

	local t0=$SECONDS st=""
	while [ $((SECONDS - t0)) -lt "$START_TIMEOUT" ]; do
		st=$(node_state)
		case $st in
		idle) break ;;
		esac
		if ! pid_of "$dir/run/slurmctld.pid" >/dev/null && [ $((SECONDS - t0)) -ge 3 ]; then
			show_logs; die "slurmctld died"
		fi
		sleep 0.2
	done
	if [ "$st" != idle ]; then
		SLURM_CONF=$conf timeout 10 sinfo -N -l >&2 || true
		show_logs
		die "node $node not idle after ${START_TIMEOUT}s (state: ${st:-none})"
	fi
	say "cluster up in $((SECONDS - t0))s after the daemons were started (node $node, $cpus CPUs, ctld port $ctld_port, slurmd port $slurmd_port)"
	print_env
}

# alive PID: the process exists and is not a zombie (PID 1 of this container
# does not reap orphans, so the daemons' zombies linger after they exit).
alive() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# The live processes of this cluster: the daemons carry KJ_SLURM_CLUSTER=DIR
# in their environment (start puts it there); the slurmstepds have a file
# under DIR open; the jobs' processes carry SLURM_JOB_ID and
# SLURM_CONF=DIR/slurm.conf (sbatch passes the caller's environment on).
# Never this shell.
cluster_procs() {
	local f p
	{
		grep -lzxF -- "KJ_SLURM_CLUSTER=$dir" /proc/[0-9]*/environ 2>/dev/null || true
		for f in $(grep -lzxF -- "SLURM_CONF=$conf" /proc/[0-9]*/environ 2>/dev/null || true); do
			grep -qz '^SLURM_JOB_ID=' "$f" 2>/dev/null && echo "$f"
		done
		# slurmstepd overwrites its environment with its process title, so
		# find it by its open files: it holds DIR/log/slurmd.log open.
		for p in $(pgrep -x slurmstepd 2>/dev/null || true); do
			for f in "/proc/$p/fd/"*; do
				case $(readlink "$f" 2>/dev/null) in
				"$dir"/*) echo "/proc/$p/environ"; break ;;
				esac
			done
		done
	} | while read -r f; do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" = $$ ] || ! alive "$p" || echo "$p"
	done
	return 0
}

wait_gone() { # wait_gone SECS PID... -> 0 when all are gone
	local end=$((SECONDS + $1)) p left
	shift
	while :; do
		left=""
		for p in "$@"; do alive "$p" && left="$left $p"; done
		[ -z "$left" ] && return 0
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

term_wait_kill() { # term_wait_kill SECS PID...
	local secs=$1
	shift
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null || true
	if ! wait_gone "$secs" "$@"; then
		say "still alive after ${secs}s, SIGKILL:$(for p in "$@"; do alive "$p" && printf ' %s' "$p"; done)"
		kill -KILL "$@" 2>/dev/null || true
		wait_gone 5 "$@" || true
	fi
}

stop() {
	local ctld slurmd munge p others
	ctld=$(pid_of "$dir/run/slurmctld.pid" || true)
	slurmd=$(pid_of "$dir/run/slurmd.pid" || true)
	munge=$(pid_of "$dir/run/munged.pid" || true)
	if [ -n "$ctld" ] && [ -f "$conf" ]; then
		# Cancel everything; the steps get SIGTERM, then SIGKILL after KillWait.
		SLURM_CONF=$conf timeout 10 scancel --quiet --full -u root 2>/dev/null || true
		local end=$((SECONDS + 15))
		while [ $SECONDS -lt $end ]; do
			[ -z "$(SLURM_CONF=$conf timeout 5 squeue -h -o %i 2>/dev/null | head -n1)" ] && break
			sleep 0.3
		done
	fi
	# slurmd and slurmctld (by pid file, and by marker in case a pid file is
	# missing after a failed start), then whatever of the cluster is left
	# (slurmstepds, job processes), munged last.
	local daemons="$slurmd $ctld"
	for p in $(cluster_procs); do
		case $(cat "/proc/$p/comm" 2>/dev/null) in
		slurmd | slurmctld) daemons="$daemons $p" ;;
		munged) munge="$munge $p" ;;
		esac
	done
	# shellcheck disable=SC2086
	term_wait_kill "$STOP_TIMEOUT" $daemons
	others=""
	for p in $(cluster_procs); do
		case " $munge " in *" $p "*) ;; *) others="$others $p" ;; esac
	done
	# shellcheck disable=SC2086
	term_wait_kill 5 $others
	# shellcheck disable=SC2086,SC2046
	term_wait_kill 10 $munge $(cluster_procs)
	local left
	left=$(cluster_procs | tr '\n' ' ')
	[ -z "$left" ] || die "still running: $left"
	return 0
}

case $cmd in
start) start ;;
stop) stop ;;
env) print_env ;;
*) usage ;;
esac
