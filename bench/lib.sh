# shellcheck shell=bash
# Shared by the benches (sourced, not run): the machine's busy CPU around
# each run, rounds in rotating order, medians with distribution-free 95%
# confidence intervals, a bootstrap test of spread, and the closing lines
# of evprof and perf read exactly.
#
# Busy CPU is the whole machine's, from the aggregate "cpu" line of
# /proc/stat: user + nice + system + irq + softirq (guest time is inside
# user), steal apart, idle and iowait left out. It sees what a profiler
# costs wherever it runs: in its own process, in the workload's context
# (BPF programs, sampling interrupts), in kernel threads, softirqs and
# other processes. It also sees every other process on the machine, so an
# overhead is the difference to a bare run of the same round, and the
# bench says how busy the machine was without it (bench_background).
#
# BENCH_LOCK=FILE: each round holds an flock on FILE, so that measurements
# sharing a machine do not run at the same time (builds still may).
# BENCH_QUIET=RATE: each round waits (BENCH_QUIET_WAIT seconds at most,
# 30) until the machine's busy CPU over a second is at most RATE CPU-s/s.
# Every round's background, a second before and after it, is kept and
# printed (bench_rounds): rounds on a busy machine are shown, not hidden.

bench_fail() {
	echo "bench: $*" >&2
	exit 1
}

# bench_args ROUNDS: $rounds (at least 6: fewer cannot give a 95% interval)
# and $evprof (EVPROF, else build/evprof), which must be built.
bench_args() {
	rounds=$1
	[ "$rounds" -ge 6 ] || bench_fail "at least 6 rounds"
	evprof=${EVPROF:-build/evprof}
	[ -x "$evprof" ] || bench_fail "no $evprof: build first (scripts/build.sh)"
}

# bench_init: the scratch directory $out, removed at exit after the
# commands in $bench_on_exit; the clock tick of /proc/stat.
bench_init() {
	out=$(mktemp -d /tmp/evprof-bench.XXXXXX)
	bench_on_exit=
	trap 'eval "$bench_on_exit"; rm -rf "$out"' EXIT
	# a stopped bench cleans up too
	trap 'exit 130' INT
	trap 'exit 143' TERM
	bench_hz=$(getconf CLK_TCK)
	: >"$out/runs"
	: >"$out/rounds"
	if [ -n "${BENCH_LOCK:-}" ]; then
		exec {bench_lock_fd}>>"$BENCH_LOCK" ||
			bench_fail "cannot open BENCH_LOCK=$BENCH_LOCK"
	fi
}

# bench_round_begin / bench_round_end: hold BENCH_LOCK over one round,
# wait for BENCH_QUIET, note the machine's background before and after.
bench_round_begin() {
	local t0=$SECONDS bg
	[ -z "${bench_lock_fd:-}" ] || flock "$bench_lock_fd"
	while :; do
		bg=$(bench_background 1 | cut -d' ' -f2)
		[ -n "${BENCH_QUIET:-}" ] || break
		awk -v b="$bg" -v q="$BENCH_QUIET" 'BEGIN { exit !(b <= q) }' &&
			break
		[ $((SECONDS - t0)) -lt "${BENCH_QUIET_WAIT:-30}" ] || break
	done
	printf "%s" "$bg" >>"$out/rounds"
}
bench_round_end() {
	echo "/$(bench_background 1 | cut -d' ' -f2)" >>"$out/rounds"
	[ -z "${bench_lock_fd:-}" ] || flock -u "$bench_lock_fd"
}

# bench_rounds: each round's background busy CPU-s/s, before/after it.
bench_rounds() {
	echo "background of each round, CPU-s/s before/after:" \
		"$(tr '\n' ' ' <"$out/rounds")"
}

# bench_cpu: sets bench_busy and bench_steal, in ticks, from /proc/stat
# (read by the shell itself: no process of its own to count).
bench_cpu() {
	local cpu user nice sys idle iowait irq softirq steal rest
	read -r cpu user nice sys idle iowait irq softirq steal rest </proc/stat
	[ "$cpu" = cpu ] && [ -n "$steal" ] ||
		bench_fail "/proc/stat: no aggregate cpu line with steal"
	bench_busy=$((user + nice + sys + irq + softirq))
	bench_steal=$steal
}

# bench_run ROUND NAME CMD...: runs CMD (stdout to $out/stdout, stderr to
# $out/stderr), fails the bench when it fails, and appends "ROUND NAME
# busy_s steal_s wall_s" to $out/runs.
bench_run() {
	local round=$1 name=$2 b0 s0 t0 t1 rc=0
	shift 2
	bench_cpu
	b0=$bench_busy s0=$bench_steal t0=$EPOCHREALTIME
	"$@" >"$out/stdout" 2>"$out/stderr" || rc=$?
	t1=$EPOCHREALTIME
	bench_cpu
	if [ "$rc" -ne 0 ]; then
		tail -5 "$out/stderr" >&2
		bench_fail "$name: exit status $rc: $*"
	fi
	awk -v r="$round" -v n="$name" -v b=$((bench_busy - b0)) \
		-v s=$((bench_steal - s0)) -v hz="$bench_hz" -v t0="$t0" \
		-v t1="$t1" 'BEGIN { printf "%s %s %.2f %.2f %.3f\n", r, n,
			b / hz, s / hz, t1 - t0 }' >>"$out/runs"
}

# bench_background SECONDS: the machine's busy and steal CPU seconds per
# second while the bench sleeps: what others use of it.
bench_background() {
	local b0 s0
	bench_cpu
	b0=$bench_busy s0=$bench_steal
	sleep "$1"
	bench_cpu
	awk -v b=$((bench_busy - b0)) -v s=$((bench_steal - s0)) \
		-v hz="$bench_hz" -v t="$1" 'BEGIN {
		printf "busy %.2f CPU-s/s, steal %.2f CPU-s/s", b / hz / t,
			s / hz / t }'
}

# bench_load: the load averages, for the report.
bench_load() {
	cut -d' ' -f1-3 /proc/loadavg
}

# bench_machine WHEN: the line that says how busy the machine is WHEN
# (before, after) the bench.
bench_machine() {
	echo "load average $1: $(bench_load);" \
		"machine without the bench: $(bench_background 3)"
}

# bench_each_round ROUNDS FN CONFIG...: ROUNDS rounds, each calling
# FN ROUND CONFIG for every config in an order that rotates by round.
bench_each_round() {
	local rounds=$1 fn=$2 r c
	shift 2
	for r in $(seq "$rounds"); do
		bench_round_begin
		for c in $(bench_rotate "$r" "$@"); do
			"$fn" "$r" "$c"
		done
		bench_round_end
	done
}

# bench_rotate ROUND ITEM...: the items, starting at ROUND modulo their
# count: each round starts with another one.
bench_rotate() {
	local r=$1 k
	shift
	local items=("$@")
	for ((k = 0; k < ${#items[@]}; k++)); do
		echo "${items[(r + k) % ${#items[@]}]}"
	done
}

# bench_values NAME [FIELD]: NAME's values of FIELD (busy, steal, wall;
# rate: busy / wall, CPU-s a second) from $out/runs, in round order.
bench_values() {
	awk -v n="$1" -v f="${2:-busy}" '
		BEGIN { c = f == "busy" ? 3 : f == "steal" ? 4 : 5 }
		f == "rate" { $6 = $3 / $5; c = 6 }
		$2 == n { print $c }' "$out/runs"
}

# bench_diffs BASE NAME [FIELD]: NAME's value minus BASE's, round by round.
bench_diffs() {
	awk -v a="$1" -v b="$2" -v f="${3:-busy}" '
		BEGIN { c = f == "busy" ? 3 : f == "steal" ? 4 : 5 }
		f == "rate" { $6 = $3 / $5; c = 6 }
		$2 == a { base[$1] = $c }
		$2 == b { v[$1] = $c }
		END {
			for (r in v) {
				if (!(r in base)) exit 1
				print v[r] - base[r]
			}
		}' "$out/runs" || bench_fail "$2 has a round without $1"
}

# bench_mci [FMT]: numbers on stdin -> "median [lo, hi]" with FMT (%.3f):
# the distribution-free confidence interval of the median from order
# statistics: [x(k), x(n+1-k)] for the largest k whose exact binomial
# coverage 1 - 2 P(Bin(n, 1/2) < k) is at least 95% (k = 1 below 6
# values, whose coverage is then less: bench_coverage says how much).
# Valid for any continuous distribution; ties of tick-rounded values make
# it slightly conservative.
bench_mci() {
	sort -g | awk -v fmt="${1:-%.3f}" '
		{ x[NR] = $1 }
		END {
			n = NR
			if (!n) { print "-"; exit }
			m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
			k = 1; tail = 0; p = 0.5 ^ n; c = 1
			for (j = 0; j < n; j++) {
				tail += c * p; c = c * (n - j) / (j + 1)
				if (tail > 0.025) break
				k = j + 1
			}
			printf fmt " [" fmt ", " fmt "]\n", m, x[k], x[n + 1 - k]
		}'
}

# bench_coverage N: the coverage of bench_mci's interval for N values.
bench_coverage() {
	awk -v n="$1" 'BEGIN {
		k = 1; tail = 0; p = 0.5 ^ n; c = 1; cov = 1 - 2 * p
		for (j = 0; j < n; j++) {
			tail += c * p; c = c * (n - j) / (j + 1)
			if (tail > 0.025) break
			k = j + 1; cov = 1 - 2 * tail
		}
		printf "%.1f%% (order statistics %d and %d of %d)", 100 * cov,
			k, n + 1 - k, n }'
}

# bench_median: the median of the numbers on stdin.
bench_median() {
	bench_mci "%s" | cut -d' ' -f1
}

# bench_cv_ratio FILE A B: FILE holds "GROUP value" lines; prints the
# coefficients of variation of A and B, their ratio A/B and its 95%
# percentile-bootstrap interval (each group resampled on its own, 10000
# times, a fixed seed).
bench_cv_ratio() {
	local est
	est=$(awk -v a="$2" -v b="$3" '$1 == a || $1 == b { print }' "$1" | awk -v a="$2" -v b="$3" '
		function cv(g, n, resample,   i, s, ss, v, m) {
			s = 0; ss = 0
			for (i = 1; i <= n; i++) {
				if (resample)
					v = x[g, 1 + int(rand() * n)]
				else
					v = x[g, i]
				s += v; ss += v * v
			}
			m = s / n
			v = (ss - n * m * m) / (n - 1)
			return (v > 0 ? sqrt(v) : 0) / m
		}
		{ x[$1, ++cnt[$1]] = $2 }
		END {
			if (cnt[a] < 3 || cnt[b] < 3) exit 1
			srand(29)
			printf "%.4f %.4f\n", cv(a, cnt[a], 0), cv(b, cnt[b], 0)
			for (i = 1; i <= 10000; i++) {
				d = cv(b, cnt[b], 1)
				print (d > 0 ? cv(a, cnt[a], 1) / d : 1e9)
			}
		}') || bench_fail "bench_cv_ratio: fewer than 3 values of $2 or $3"
	{
		head -1 <<<"$est"
		tail -n +2 <<<"$est" | sort -g
	} | awk -v a="$2" -v b="$3" '
		NR == 1 { ca = $1; cb = $2 }
		NR == 251 { lo = $1 }
		NR == 9752 { hi = $1 }
		END {
			printf "cv %s %.2f%%, %s %.2f%%: ratio %.2f, 95%% CI [%.2f, %.2f]\n",
				a, 100 * ca, b, 100 * cb, (cb > 0 ? ca / cb : 0), lo, hi
		}'
}

# bench_evprof_lost FILE: "records samples" lost, from evprof record's
# closing line ("...; lost N records (M LOST records), K samples; wrote
# ..."); with --engine bpf, + the engine's note "..., S samples and T
# slices (full maps)" added to samples. Fails when the line is missing.
bench_evprof_lost() {
	local line
	line=$(sed -nE '/^evprof: [0-9]+ samples of .*; lost [0-9]+ records \([0-9]+ LOST records\), [0-9]+ samples; wrote /p' "$1" | tail -1)
	[ -n "$line" ] ||
		bench_fail "no closing line of evprof record in: $(tail -3 "$1")"
	awk -v line="$line" '
		BEGIN {
			match(line, /lost [0-9]+ records/)
			rec = substr(line, RSTART + 5, RLENGTH - 13)
			match(line, /[0-9]+ samples; wrote /)
			smp = substr(line, RSTART, RLENGTH - 16)
		}
		/evprof: engine bpf: / {
			if (!match($0, /[0-9]+ samples and [0-9]+ slices \(full maps\)/))
				exit 1
			split(substr($0, RSTART, RLENGTH), f, " ")
			smp += f[1] + f[4]
		}
		END { print rec + 0, smp + 0 }' "$1" ||
		bench_fail "unreadable engine bpf note in $1"
}

# bench_perf_lost DATA: PERF_RECORD_LOST records (chunks of lost events)
# plus LOST_SAMPLES records in perf.data DATA, from perf report --stats
# (which lists only the record types it met: absent means none, as long
# as its total is there).
bench_perf_lost() {
	perf report --stats -i "$1" 2>/dev/null | awk '
		/^ *TOTAL events:/ { total = 1 }
		/^ *LOST events:/ { lost += $3 }
		/^ *LOST_SAMPLES events:/ { lost += $3 }
		/ stats:$/ && !/^Aggregated/ { exit }
		END { if (!total) exit 1; print lost + 0 }' ||
		bench_fail "perf report --stats could not read $1"
}
