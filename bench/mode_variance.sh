#!/usr/bin/env bash
# Does recording per CPU (--mode cpu) add variance to a wall-time benchmark,
# compared with per-task recording (--mode task) and no recording at all?
# A fixed-work benchmark (cpu_work: 2 threads, ITER spin iterations) runs
# ROUNDS times in each of three configurations, interleaved (the order
# rotates every round), on the machine as it is and then beside an
# unrelated busy process. Per configuration: median wall time, slowdown
# against bare, coefficient of variation (CV); per pair: the mean
# difference with its 95% confidence interval (Welch), and the ratio of
# the two CVs with its 95% percentile-bootstrap interval (bench/lib.sh):
# the test of spread. An interval that contains 1 does not show the
# spreads equal: it bounds how much larger or smaller the spread can be
# given ROUNDS rounds.
# Usage: bench/mode_variance.sh [ROUNDS [ITER]] (needs build/evprof;
# QUICK=1: 6 rounds of a tenth of the work; BENCH_LOCK=FILE holds an flock
# on FILE over each round).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-10}
iter=${2:-8000000000}
[ -z "${QUICK:-}" ] || rounds=6 iter=$((iter / 10))
[ "$rounds" -ge 6 ] || bench_fail "at least 6 rounds"
evprof=${EVPROF:-build/evprof}
[ -x "$evprof" ] || bench_fail "no $evprof: build first (scripts/build.sh)"
bench_init
busy=
bench_on_exit='[ -z "$busy" ] || kill "$busy"'
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/cpu_work.c

run() { # ROUND CONFIG: appends "CONFIG work_s" to $out/times
	local cmd=("$out/work" 2 "$iter") secs
	case $2 in
	task | cpu)
		cmd=("$evprof" record --mode "$2" -e cpu-clock,page-faults
			-o "$out/p.pb.gz" -- "${cmd[@]}") ;;
	esac
	bench_run "$1" "$2" "${cmd[@]}"
	secs=$(sed -n 's/^work_s=//p' "$out/stderr")
	[ -n "$secs" ] || bench_fail "$2: the workload printed no work_s"
	echo "$2 $secs" >>"$out/times"
}

measure() { # LABEL
	: >"$out/times"
	echo "== $1: $rounds rounds, work_s of cpu_work 2 $iter;" \
		"load average $(bench_load)"
	for r in $(seq "$rounds"); do
		bench_round_begin
		for c in $(bench_rotate "$r" bare task cpu); do
			run "$r" "$c"
		done
		bench_round_end
	done
	awk '
	function median(c,   n, i, j, t, a) {
		n = cnt[c]
		for (i = 1; i <= n; i++) a[i] = v[c, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function tq(df) { # two-sided 95% t quantile
		return df >= 60 ? 2.00 : df >= 30 ? 2.04 : df >= 20 ? 2.09 : \
		       df >= 15 ? 2.13 : df >= 10 ? 2.23 : df >= 5 ? 2.57 : 4.30
	}
	{ cnt[$1]++; v[$1, cnt[$1]] = $2; s[$1] += $2; ss[$1] += $2 * $2 }
	END {
		split("bare task cpu", cf, " ")
		for (k = 1; k <= 3; k++) {
			c = cf[k]; n = cnt[c]; m[c] = s[c] / n
			var[c] = (ss[c] - n * m[c] * m[c]) / (n - 1)
			if (var[c] < 0) var[c] = 0
			med[c] = median(c)
		}
		printf "%-6s %9s %9s %8s %7s\n", "config", "median_s", "slowdown", "mean_s", "cv"
		for (k = 1; k <= 3; k++) {
			c = cf[k]
			printf "%-6s %9.3f %8.3fx %8.3f %6.2f%%\n", c, med[c],
			       med[c] / med["bare"], m[c], 100 * sqrt(var[c]) / m[c]
		}
		split("task-bare cpu-bare cpu-task", pr, " ")
		for (k = 1; k <= 3; k++) {
			split(pr[k], ab, "-"); a = ab[1]; b = ab[2]
			va = var[a] / cnt[a]; vb = var[b] / cnt[b]; se = sqrt(va + vb)
			df = se > 0 ? (va + vb) ^ 2 / (va ^ 2 / (cnt[a] - 1) + vb ^ 2 / (cnt[b] - 1)) : 1e9
			d = m[a] - m[b]
			printf "%-9s mean diff %+.3f s, 95%% CI [%+.3f, %+.3f]%s\n", pr[k], d,
			       d - tq(df) * se, d + tq(df) * se,
			       (d - tq(df) * se <= 0 && d + tq(df) * se >= 0) ? \
			       " (no detectable difference)" : ""
		}
	}' "$out/times"
	for p in task:bare cpu:bare cpu:task; do
		printf "%-9s spread: " "${p/:/-}"
		bench_cv_ratio "$out/times" "${p%:*}" "${p#*:}"
	done
	bench_rounds
	echo "load average at the end: $(bench_load)"
}

measure "the machine as it is ($(bench_background 3) without the bench)"
sh -c 'while :; do :; done' &
busy=$!
measure "beside a busy process (one spinning shell)"
