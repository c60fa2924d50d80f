#!/usr/bin/env bash
# Does recording per CPU (--mode cpu) add variance to a wall-time benchmark,
# compared with per-task recording (--mode task) and no recording at all?
# A fixed-work benchmark (cpu_work: 2 threads, ITER spin iterations) runs
# ROUNDS times in each of three configurations, interleaved (the order
# rotates every round), on an idle machine and then beside an unrelated
# busy process. Per configuration: median wall time, slowdown against
# bare, coefficient of variation; per pair: the mean difference with its
# 95% confidence interval (Welch).
# Usage: bench/mode_variance.sh [ROUNDS [ITER]]   (needs build/evprof)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
iter=${2:-8000000000}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d /tmp/evprof-bench.XXXXXX)
busy=
trap 'rm -rf "$out"; [ -z "$busy" ] || kill "$busy" 2>/dev/null' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/cpu_work.c

run() { # CONFIG: appends "CONFIG work_s" to $out/times
	local cmd=("$out/work" 2 "$iter")
	case $1 in
	task | cpu)
		cmd=("$evprof" record --mode "$1" -e cpu-clock,page-faults
			-o "$out/p.pb.gz" -- "${cmd[@]}") ;;
	esac
	"${cmd[@]}" >/dev/null 2>"$out/err"
	echo "$1 $(sed -n 's/^work_s=//p' "$out/err")" >>"$out/times"
}

measure() { # LABEL
	: >"$out/times"
	local configs=(bare task cpu)
	for r in $(seq "$rounds"); do
		for k in 0 1 2; do
			run "${configs[$(((r + k) % 3))]}"
		done
	done
	echo "== $1: $rounds rounds, work_s of cpu_work 2 $iter"
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
}

measure "idle machine"
sh -c 'while :; do :; done' &
busy=$!
measure "beside a busy process (one spinning shell)"
