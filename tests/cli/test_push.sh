#!/usr/bin/env bash
# evprof record --push against a local stand-in for Pyroscope's /ingest
# (tests/tools/pyroscope_endpoint.mjs: its own multipart, gzip and pprof
# decoding, Pyroscope's series split and answers). The endpoint is first
# checked with Pyroscope's own Node.js client; page-fault totals are
# checked against the workload's getrusage; then the failure modes.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults
EP=$TOOLS/pyroscope_endpoint.mjs

need_push

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_ep NAME ARGS...: endpoint logging to $TMP/NAME.log; sets EP_PID.
start_ep() {
	local name=$1
	shift
	rm -f "$TMP/$name.port"
	node "$EP" --port-file "$TMP/$name.port" --log "$TMP/$name.log" "$@" \
		2>"$TMP/$name.eperr" &
	EP_PID=$!
	touch "$TMP/$name.log"
}
wait_port() { # NAME
	for _ in $(seq 100); do
		[ -s "$TMP/$1.port" ] && { cat "$TMP/$1.port"; return; }
		sleep 0.1
	done
	echo 0
}
stop_ep() { kill "$EP_PID" 2>/dev/null; wait "$EP_PID" 2>/dev/null; }
# jq-like field of request N (1-based) of a log: field NAME LOG N EXPR
req() {
	python3 -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
r = rs[n - 1] if 0 < n <= len(rs) else {}
print(eval(sys.argv[3], {"r": r, "rs": rs}))' "$@"
}

# 1. The endpoint itself: Pyroscope's Node.js client is accepted.
start_ep node
port=$(wait_port node)
node "$TOOLS/pyroscope_client.mjs" "http://127.0.0.1:$port" nodeapp \
	>"$TMP/node.out" 2>&1 || fail "node client: $(cat "$TMP/node.out")"
sleep 0.5
[ "$(req "$TMP/node.log" 1 'r.get("status")')" = 200 ] &&
	ok "endpoint accepts @pyroscope/nodejs's push" ||
	fail "node client push: $(cat "$TMP/node.log")"
[ "$(req "$TMP/node.log" 1 'r["series"][0]["labels"]["service_name"]')" = nodeapp ] &&
	ok "its series is named nodeapp" || fail "node series: $(cat "$TMP/node.log")"
# ... and refuses what Pyroscope refuses: format=pprof takes the whole
# body for the pprof, so a multipart body fails to decode (422).
head -c 100 /dev/urandom >"$TMP/junk"
code=$(curl -s -o /dev/null -w '%{http_code}' -F "profile=@$TMP/junk" \
	"http://127.0.0.1:$port/ingest?name=x&format=pprof")
[ "$code" = 422 ] && ok "multipart with format=pprof refused (422)" ||
	fail "multipart with format=pprof answered $code"
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$TMP/junk" \
	"http://127.0.0.1:$port/ingest?name=bad%20name")
[ "$code" = 400 ] && ok "bad name refused (400)" || fail "bad name: $code"
stop_ep

# 2. A one-shot push: parsed, accepted, one series, faults vs rusage.
start_ep ok
port=$(wait_port ok)
EVPROF_PUSH_TOKEN=s3cret EVPROF_PUSH_TENANT=team-a \
	"$EVPROF" record -e cpu-clock,page-faults -o "$TMP/ok.pb.gz" \
	--push "http://127.0.0.1:$port" --tag service_name=wltest \
	--tag env=ci -- "$WL" 20000 0 2 100 >"$TMP/ok.out" 2>"$TMP/ok.err"
status=$?
stop_ep
[ "$status" -eq 0 ] && ok "record --push exit 0" ||
	fail "exit $status: $(cat "$TMP/ok.err")"
grep -q "push: 1 profiles sent" "$TMP/ok.err" && ok "summary says sent" ||
	fail "no push summary: $(cat "$TMP/ok.err")"
[ "$(wc -l <"$TMP/ok.log")" -eq 1 ] && ok "exactly one request" ||
	fail "requests: $(cat "$TMP/ok.log")"
[ "$(req "$TMP/ok.log" 1 'r["status"], "series" in r')" = "(200, True)" ] &&
	ok "push accepted and parsed" ||
	fail "push answered: $(cat "$TMP/ok.log")"
[ "$(req "$TMP/ok.log" 1 'r["auth"], r["tenant"]')" = "('Bearer s3cret', 'team-a')" ] &&
	ok "token and tenant from the environment" ||
	fail "auth: $(req "$TMP/ok.log" 1 'r["auth"], r["tenant"]')"
[ "$(req "$TMP/ok.log" 1 'len(r["series"])')" = 1 ] &&
	ok "one series (one process)" ||
	fail "series: $(req "$TMP/ok.log" 1 'r["series"]')"
labels=$(req "$TMP/ok.log" 1 'sorted(r["series"][0]["labels"].items())')
for want in "('service_name', 'wltest')" "('env', 'ci')" \
	"('process_name', 'wl_faults')" "('__name__', 'process_cpu')" \
	"('hostname', '$(hostname)')"; do
	case $labels in
	*"$want"*) ok "series label $want" ;;
	*) fail "series lacks $want: $labels" ;;
	esac
done
case $labels in
*"'tid'"* | *"'pid'"* | *"'thread'"*) fail "per-thread labels pushed: $labels" ;;
*) ok "no pid, tid or thread label" ;;
esac
# Every sample type is described in sample_type_config.
missing=$(req "$TMP/ok.log" 1 '[t for t in r["sampleTypes"] if t.split("/")[0] not in r["stConfig"] or "units" not in r["stConfig"][t.split("/")[0]] or r["stConfig"][t.split("/")[0]].get("aggregation") != "sum"]')
[ "$missing" = "[]" ] && ok "sample_type_config covers every sample type" ||
	fail "sample types without config: $missing"
pf=$(req "$TMP/ok.log" 1 'r["totals"][r["sampleTypes"].index("page-faults/count")]')
truth=$(sed -n 's/^process faults=//p' "$TMP/ok.err")
if [ -n "$truth" ] && within "$pf" "$truth" 0.5; then
	ok "pushed page faults $pf within 0.5% of rusage $truth"
else
	fail "pushed page faults '$pf' vs rusage '$truth'"
fi
[ -s "$TMP/ok.pb.gz" ] && ok "local output written too" || fail "no local file"

# 2b. Two processes of different names (and a shell that may be sampled):
# one series per process name, each with its own process's faults.
cp "$WL" "$TMP/wl_other"
start_ep two
port=$(wait_port two)
"$EVPROF" record -e cpu-clock,page-faults -o "$TMP/two.pb.gz" \
	--push "http://127.0.0.1:$port" -- sh -c \
	"'$WL' 40000 0 1 2>'$TMP/two.a'; '$TMP/wl_other' 30000 0 2 2>'$TMP/two.b'" \
	>/dev/null 2>"$TMP/two.err" || fail "two: $(cat "$TMP/two.err")"
stop_ep
names=$(req "$TMP/two.log" 1 'sorted(g["labels"]["process_name"] for g in r.get("series", []))')
case $names in
"['sh', 'wl_faults', 'wl_other']" | "['wl_faults', 'wl_other']")
	ok "one series per process name: $names" ;;
*) fail "series: $names" ;;
esac
for p in wl_faults:a wl_other:b; do
	got=$(req "$TMP/two.log" 1 "[g['totals'][r['sampleTypes'].index('page-faults/count')] for g in r['series'] if g['labels']['process_name'] == '${p%:*}'][0]")
	truth=$(sed -n 's/^process faults=//p' "$TMP/two.${p#*:}")
	if [ -n "$truth" ] && within "$got" "$truth" 0.5; then
		ok "series ${p%:*}: page faults $got within 0.5% of its rusage $truth"
	else
		fail "series ${p%:*}: page faults '$got' vs rusage '$truth'"
	fi
done

# record PORT NAME [EXTRA...]: a short recording pushed to the port.
record() {
	local port=$1 name=$2
	shift 2
	"$EVPROF" record -e cpu-clock -o "$TMP/$name.pb.gz" \
		--push "http://127.0.0.1:$port" "$@" -- "$WL" 2000 0 1 \
		>/dev/null 2>"$TMP/$name.err"
}

# 3. Endpoint down at start: retried until it listens.
port=$(free_port)
start_ep down --port "$port" --listen-after-ms 2500
record "$port" down
status=$?
sleep 0.2
stop_ep
[ "$status" -eq 0 ] && ok "down at start: pushed once it came up" ||
	fail "down at start: exit $status: $(cat "$TMP/down.err")"
grep -q "retrying" "$TMP/down.err" && ok "down at start: retries said" ||
	fail "no retry message: $(cat "$TMP/down.err")"
[ "$(req "$TMP/down.log" 1 'r.get("status")')" = 200 ] &&
	ok "down at start: accepted" || fail "down: $(cat "$TMP/down.log")"

# 4. 500 twice, then OK: retried.
start_ep e500 --mode 500:2
record "$(wait_port e500)" e500
status=$?
stop_ep
[ "$(req "$TMP/e500.log" 0 '[x["status"] for x in rs]')" = "[500, 500, 200]" ] &&
	ok "500: retried until accepted" || fail "500: $(cat "$TMP/e500.log")"
[ "$status" -eq 0 ] && grep -q "2 retries" "$TMP/e500.err" &&
	ok "500: exit 0, 2 retries reported" ||
	fail "500: exit $status: $(cat "$TMP/e500.err")"

# 5. 429 with Retry-After: 3 s honoured (back-off alone would be 0.5 s).
start_ep e429 --mode 429:1:3
record "$(wait_port e429)" e429
status=$?
stop_ep
[ "$(req "$TMP/e429.log" 0 '[x["status"] for x in rs]')" = "[429, 200]" ] &&
	ok "429: retried once" || fail "429: $(cat "$TMP/e429.log")"
gap=$(req "$TMP/e429.log" 0 'rs[1]["t_ms"] - rs[0]["t_ms"] if len(rs) > 1 else 0')
[ "$gap" -ge 2900 ] && ok "429: Retry-After honoured (${gap} ms)" ||
	fail "429: retried after $gap ms"

# 6. 400: not retried, said, local file still written, exit 1.
start_ep e400 --mode 400
record "$(wait_port e400)" e400
status=$?
sleep 1
stop_ep
[ "$(wc -l <"$TMP/e400.log")" -eq 1 ] && ok "400: not retried" ||
	fail "400: $(cat "$TMP/e400.log")"
grep -q "answered 400, window not retried" "$TMP/e400.err" &&
	ok "400: said" || fail "400: $(cat "$TMP/e400.err")"
[ "$status" -eq 1 ] && ok "400: exit 1" || fail "400: exit $status"
[ -s "$TMP/e400.pb.gz" ] && ok "400: local file written" || fail "400: no file"

# 7. Never answering: bounded wait, clear message, local file written.
start_ep hang --mode hang
start=$(date +%s)
record "$(wait_port hang)" hang --push-wait 3
status=$?
took=$(($(date +%s) - start))
stop_ep
[ "$took" -le 30 ] && ok "hang: gave up after ${took} s" ||
	fail "hang: took $took s"
grep -q "1 left unsent after waiting" "$TMP/hang.err" &&
	ok "hang: unsent window reported" || fail "hang: $(cat "$TMP/hang.err")"
[ "$status" -eq 1 ] && ok "hang: exit 1" || fail "hang: exit $status"
gzip -t "$TMP/hang.pb.gz" 2>/dev/null && ok "hang: local file written" ||
	fail "hang: local file missing or broken"

# 8. TLS is verified: a self-signed server is refused, then accepted with
# its certificate as EVPROF_PUSH_CA_FILE.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" \
	-out "$TMP/cert.pem" >/dev/null 2>&1 || fail "openssl cannot make a cert"
start_ep tls --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem"
port=$(wait_port tls)
"$EVPROF" record -e cpu-clock -o "$TMP/tls1.pb.gz" --push-wait 2 \
	--push "https://127.0.0.1:$port" -- "$WL" 2000 0 1 >/dev/null \
	2>"$TMP/tls1.err"
status=$?
[ "$status" -eq 1 ] && grep -qi "certificate" "$TMP/tls1.err" &&
	[ ! -s "$TMP/tls.log" ] && ok "self-signed server refused" ||
	fail "self-signed: exit $status: $(cat "$TMP/tls1.err" "$TMP/tls.log")"
EVPROF_PUSH_CA_FILE=$TMP/cert.pem "$EVPROF" record -e cpu-clock \
	-o "$TMP/tls2.pb.gz" --push "https://127.0.0.1:$port" -- "$WL" 2000 0 1 \
	>/dev/null 2>"$TMP/tls2.err"
status=$?
stop_ep
[ "$status" -eq 0 ] && [ "$(req "$TMP/tls.log" 1 'r.get("status")')" = 200 ] &&
	ok "accepted with EVPROF_PUSH_CA_FILE" ||
	fail "CA file: exit $status: $(cat "$TMP/tls2.err" "$TMP/tls.log")"

finish
