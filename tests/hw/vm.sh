#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Hardware counters against a PMU: QEMU's emulated arm64 PMU (PMUv3). Builds
# evprof for arm64 (cmake/aarch64-linux-gnu.cmake), fetches Debian's arm64
# kernels through their metapackages (6.1: the per-CPU path; 6.12: task
# mode, inherit + PERF_SAMPLE_READ), packs an initramfs (busybox, evprof
# and its libraries, wl_hw, guest.sh), boots each kernel with -smp 1
# -icount shift=1 (one instruction per two cycles: IPC 0.5, so cycles and
# instructions differ) and checks what guest.sh printed against truths
# computed from wl_hw's disassembly. Limits of the emulation: README.md
# (tests/hw).
#
# usage: tests/hw/vm.sh [NATIVE_EVPROF]   (default build/evprof: reads the
# guest's profiles here). Work files in ${HW_DIR:-build-hw}.
set -uo pipefail
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
export EVPROF=$(realpath "${1:-$SRCDIR/build/evprof}") FIXTURES=/nonexistent SRCDIR
. "$SRCDIR/tests/cli/lib.sh"
HW=$(realpath -m "${HW_DIR:-$SRCDIR/build-hw}")
mkdir -p "$HW"
t0=$(date +%s)
N=${HW_N:-20000000}
die() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "hw: $*"; }

# ---- arm64 build -------------------------------------------------------
"$SRCDIR/scripts/arm64-sysroot.sh" "$HW/sysroot" || die "no arm64 sysroot"
cmake -S "$SRCDIR" -B "$HW/build" \
	-DCMAKE_TOOLCHAIN_FILE="$SRCDIR/cmake/aarch64-linux-gnu.cmake" \
	-DEVPROF_SYSROOT="$HW/sysroot" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DEVPROF_BUILD_TESTS=OFF -DEVPROF_BUILD_BENCH=OFF \
	-DEVPROF_BUILD_EXAMPLES=OFF >"$HW/cmake.log" 2>&1 ||
	die "arm64 configure: $(tail -5 "$HW/cmake.log")"
cmake --build "$HW/build" --clean-first -j"$(nproc)" >"$HW/build.log" 2>&1 ||
	die "arm64 build: $(grep -m5 error "$HW/build.log")"
warnings=$(grep -c "warning:" "$HW/build.log")
[ "$warnings" -eq 0 ] && ok "arm64 build: 0 warnings" ||
	fail "arm64 build: $warnings warnings: $(grep -m3 warning: "$HW/build.log")"
aarch64-linux-gnu-gcc --sysroot="$HW/sysroot" -O2 -g -fno-omit-frame-pointer \
	-Wall -Wextra -Werror -pthread "$SRCDIR/tests/hw/wl_hw.c" -o "$HW/wl_hw" ||
	die "wl_hw does not build"
COUNT=${HW_COUNT:-10000000}
aarch64-linux-gnu-gcc -nostdlib -static -DCOUNT="$COUNT" \
	"$SRCDIR/tests/hw/wl_count.S" -o "$HW/wl_count" || die "wl_count does not build"

# ---- kernels and busybox -------------------------------------------------
# The packages a metapackage depends on, downloaded once into $HW/debs.
debs=$HW/debs
fetch() { # PACKAGE...
	local tmp
	tmp=$(mktemp -d) && chmod 755 "$tmp" # apt's _apt user must enter it
	(cd "$tmp" && apt-get download -qq "$@" 2>&1 | grep -v unsandboxed)
	mv "$tmp"/*.deb "$debs"/ 2>/dev/null
	rm -rf "$tmp"
}
kernels=()
for meta in linux-image-arm64 linux-image-6.12-arm64; do
	pkg=$(apt-cache depends "$meta:arm64" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[^:]*\):arm64$/\1/p' | head -1)
	[ -n "$pkg" ] || die "$meta:arm64 is not in the apt lists (dpkg --add-architecture arm64; apt-get update)"
	compgen -G "$debs/${pkg}_*_arm64.deb" >/dev/null || fetch "$pkg:arm64"
	deb=$(compgen -G "$debs/${pkg}_*_arm64.deb" | head -1)
	[ -n "$deb" ] || die "could not download $pkg:arm64"
	ver=${pkg#linux-image-}
	for f in vmlinuz config; do
		[ -s "$HW/$f-$ver" ] ||
			dpkg-deb --fsys-tarfile "$deb" | tar -xO "./boot/$f-$ver" \
				>"$HW/$f-$ver" || die "no $f in $deb"
	done
	kernels+=("$ver")
done
compgen -G "$debs/busybox-static_*_arm64.deb" >/dev/null || fetch busybox-static:arm64
bb=$(compgen -G "$debs/busybox-static_*_arm64.deb" | head -1)
[ -n "$bb" ] || die "could not download busybox-static:arm64"

# ---- initramfs -------------------------------------------------------------
root=$HW/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,hw,proc,sys,dev,tmp,lib}
dpkg-deb --fsys-tarfile "$bb" | tar -xO ./bin/busybox >"$root/bin/busybox"
chmod +x "$root/bin/busybox"
cp "$HW/build/evprof" "$HW/wl_hw" "$HW/wl_count" "$SRCDIR/tests/hw/guest.sh" \
	"$root/hw/"
mkdir -p "$root/boot"
# As on an installed system: evprof reads the kernel's config there.
for ver in "${kernels[@]}"; do
	cp "$HW/config-$ver" "$root/boot/"
done
echo "$N" >"$root/hw/n"
# The shared libraries the programs need, found in the sysroot.
libs=()
need() { aarch64-linux-gnu-readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
queue=("$root/hw/evprof" "$root/hw/wl_hw")
while [ ${#queue[@]} -gt 0 ]; do
	f=${queue[0]}
	queue=("${queue[@]:1}")
	for l in $(need "$f"); do
		[ -e "$root/lib/$l" ] && continue
		p=$(find "$HW/sysroot/lib/aarch64-linux-gnu" "$HW/sysroot/usr/lib/aarch64-linux-gnu" -name "$l" 2>/dev/null | head -1)
		[ -n "$p" ] || die "$l (needed by $(basename "$f")) is not in the sysroot"
		cp -L "$p" "$root/lib/$l"
		queue+=("$root/lib/$l")
	done
done
cp -L "$HW/sysroot/lib/ld-linux-aarch64.so.1" "$root/lib/"
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
echo -1 >/proc/sys/kernel/perf_event_paranoid
sh /hw/guest.sh
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$HW/initrd.gz" ||
	die "cpio failed"
say "initramfs $(du -k "$HW/initrd.gz" | cut -f1) KB; built in $(($(date +%s) - t0)) s"

# ---- the truths: wl_hw's functions from its disassembly --------------------
# insns PROGRAM FUNCTION: "LENGTH LOOP": the instructions the function runs
# once, up to its ret or svc, and those of its loop (from the backward
# branch's target to the branch).
insns() {
	local n=0 loop=0 addr op arg
	while read -r addr op arg _; do
		n=$((n + 1))
		# b.ne 1b: "b.ne  c24 <fa+0x4>"
		[[ $op == b.* ]] && loop=$(((0x${addr%:} - 0x$arg) / 4 + 1))
		[[ $op == ret || $op == svc ]] && break
	done < <(aarch64-linux-gnu-objdump -d --no-show-raw-insn "$1" |
		sed -n "/^[0-9a-f]* <$2>:\$/,/^\$/p" | sed '1d;/^$/d')
	echo "$n $loop"
}
# truth PROGRAM FUNCTION N: instructions one call (one run) retires
truth() {
	local len loop
	read -r len loop < <(insns "$1" "$2")
	[ "$loop" -gt 0 ] || die "no loop in $2 of $1"
	echo $(($3 * loop + len - loop))
}
for f in fa fb; do
	say "$f: $(insns "$HW/wl_hw" $f | sed 's/ / instructions, a loop of /') (objdump)"
done
say "_start of wl_count: $(insns "$HW/wl_count" _start | sed 's/ / instructions, a loop of /') (objdump)"

# ---- the checks, on what one guest printed ----------------------------------
# block NAME: the lines the guest printed between "=== begin NAME" and its end
block() {
	sed -n "/^=== begin $1\$/,/^=== end $1\$/p" "$LOG" | sed '1d;$d'
}
# sum_leaf FOLDED FUNCTION [PATTERN]: the weight of stacks that end in the
# function (and match PATTERN)
sum_leaf() {
	awk -v f="$2" -v p="${3:-}" '{ n = $NF; $NF = ""; sub(/ $/, "")
		if ($0 ~ (";" f "$") && (p == "" || index($0, p))) s += n }
		END { printf "%d\n", s }' "$1"
}
# stat_value BLOCK EVENT: the count evprof stat printed for EVENT
stat_value() {
	block "$1" | awk -v e="$2" '$2 == e { print $1; exit }'
}

check() {
	local k=$1 d=$HW/out-$1 line nctr pmu ins cyc t got f n r w e th
	LOG=$2
	rm -rf "$d" && mkdir -p "$d"
	line=$(block dmesg | grep -m1 "hw perfevents: enabled with")
	if [[ $line =~ with\ ([a-z0-9_]+)\ PMU\ driver,\ ([0-9]+)\  ]]; then
		pmu=${BASH_REMATCH[1]} nctr=${BASH_REMATCH[2]}
		ok "$k: PMU $pmu found, $nctr counters (dmesg)"
	else
		fail "$k: no PMU in dmesg: $(block dmesg)"
		return
	fi
	got=$(block info | sed -n 's/^ *general counters: *\([0-9]*\) .*/\1/p')
	[ "$got" = $((nctr - 1)) ] &&
		ok "$k: info: $got general counters and the cycle counter" ||
		fail "$k: info: general counters '$got', dmesg $nctr counters: $(block info | grep counters)"

	# stat: a whole program of known length
	ins=$(stat_value count instructions:u)
	cyc=$(stat_value count cycles:u)
	t=$(truth "$HW/wl_count" _start "$COUNT")
	if [[ $ins =~ ^[0-9]+$ ]] && [ $((ins > t ? ins - t : t - ins)) -le 4 ]; then
		ok "$k: stat: instructions:u $ins, truth $t"
	else
		fail "$k: stat: instructions:u '$ins', truth $t: $(block count)"
	fi
	[ -n "$cyc" ] && [ "$cyc" = $((2 * ins)) ] &&
		ok "$k: stat: cycles:u $cyc, twice the instructions" ||
		fail "$k: stat: cycles:u '$cyc' for $ins instructions"

	# record: instructions ride on cycles' samples, cycles by their own
	block dwarf.pb.gz | base64 -d >"$d/dwarf.pb.gz" 2>/dev/null
	"$EVPROF" report "$d/dwarf.pb.gz" -o "$d/dwarf.folded" --weight cycles:u \
		>/dev/null 2>&1 || fail "$k: dwarf: no folded: $(block dwarf | tail -3)"
	for f in fa fb; do
		got=$(sum_leaf "$d/dwarf.folded" $f "main;run;$f")
		t=$(sum_leaf "$d/dwarf.folded" $f)
		awk -v a="$got" -v b="$t" 'BEGIN { exit !(b > 0 && a >= 0.99 * b) }' &&
			ok "$k: -g dwarf: main;run;$f for $got of $t cycles" ||
			fail "$k: -g dwarf: main;run;$f for $got of $t cycles"
	done
	for r in loops threads insn; do
		block "$r.pb.gz" | base64 -d >"$d/$r.pb.gz" 2>/dev/null
		for w in instructions:u cycles:u; do
			"$EVPROF" report "$d/$r.pb.gz" -o "$d/$r.$w.folded" \
				--weight "$w" >/dev/null 2>&1 ||
				fail "$k: $r: no folded --weight $w: $(block $r | tail -3)"
		done
	done
	for f in fa fb; do
		[ $f = fa ] && n=$((3 * N)) || n=$N
		t=$(truth "$HW/wl_hw" $f $n)
		got=$(sum_leaf "$d/loops.instructions:u.folded" $f)
		within "$got" "$t" 0.1 &&
			ok "$k: loops: $f instructions:u $got, truth $t" ||
			fail "$k: loops: $f instructions:u $got, truth $t"
		got=$(sum_leaf "$d/loops.cycles:u.folded" $f)
		within "$got" $((2 * t)) 0.1 &&
			ok "$k: loops: $f cycles:u $got, twice the truth $((2 * t))" ||
			fail "$k: loops: $f cycles:u $got, twice the truth $((2 * t))"
		ins=$(sum_leaf "$d/loops.instructions:u.folded" $f ";run;$f")
		got=$(sum_leaf "$d/loops.instructions:u.folded" $f)
		awk -v a="$ins" -v b="$got" 'BEGIN { exit !(b > 0 && a >= 0.99 * b) }' &&
			ok "$k: loops: $f's caller run kept (LR at the sample) for $ins of $got instructions" ||
			fail "$k: loops: $f's caller run kept for $ins of $got instructions"
		got=$("$EVPROF" report -n 0 "$d/loops.pb.gz" |
			awk -v f=$f '/^by self/ { on = 1 } on && $(NF - 1) == f { print $(NF - 2); exit }')
		[ "$got" = 0.500 ] && ok "$k: report: $f insn/cycle $got" ||
			fail "$k: report: $f insn/cycle '$got'"
	done
	# view: the IPC preset colours and fills the ratio column
	if "$EVPROF" view -o "$d/loops.html" "$d/loops.pb.gz" >/dev/null 2>&1 &&
		node "$SRCDIR/tests/tools/view.mjs" "$d/loops.html" --offline \
			--colour IPC --weight cycles:u >"$d/view.json" 2>"$d/view.err"; then
		for f in fa fb; do
			got=$(node -e "const d = JSON.parse(require('fs').readFileSync('$d/view.json'));
				const r = d.rows.find((r) => r[0] === '$f'); console.log(r ? r[r.length - 1] : '')")
			[ "$got" = 0.5 ] && ok "$k: view: $f IPC $got" ||
				fail "$k: view: $f IPC '$got'"
		done
	else
		fail "$k: view: $(cat "$d/view.err")"
	fi
	for r in loops threads insn; do
		! block $r | grep "throttled" ||
			fail "$k: $r: throttled: its counters missed events"
	done
	block loops | grep -q "instructions:u cannot sample on its own (its overflows come late" &&
		ok "$k: late instructions overflows found and said: $(block loops | grep -o 'its overflows come late[^)]*')" ||
		fail "$k: late instructions overflows not said: $(block loops)"
	for f in fa fb; do
		[ $f = fa ] && n=$((2 * N)) th=ta || n=$N th=tb
		t=$(truth "$HW/wl_hw" $f $n)
		got=$(awk -v th="$th" 'index($0, th ";") == 1' "$d/threads.instructions:u.folded" >"$d/$th.folded"
			sum_leaf "$d/$th.folded" $f)
		within "$got" "$t" 0.1 &&
			ok "$k: threads: $th's $f instructions:u $got, truth $t" ||
			fail "$k: threads: $th's $f instructions:u $got, truth $t"
	done
	block insn | grep -q "instructions:u samples few and late" &&
		ok "$k: instructions as the sampler: said to sample few and late ($(block insn | grep -o '[0-9]* samples of instructions:u'))" ||
		fail "$k: instructions as the sampler, nothing said: $(block insn)"

	# multiplexing: each scaled value against its run alone
	for e in instructions:u instructions:k; do
		[ $e = instructions:u ] && t=$(stat_value mux_u $e) || t=$(stat_value mux_k $e)
		got=$(stat_value mux_all $e)
		line=$(block mux_all | awk -v e="$e" '$2 == e')
		if within "$got" "$t" 2 && [[ $line =~ \(([0-9.]+)%\) ]] &&
			awk -v s="${BASH_REMATCH[1]}" 'BEGIN { exit !(s > 0 && s < 100) }'; then
			ok "$k: multiplexed: $e $got, alone $t, running ${BASH_REMATCH[1]}%"
		else
			fail "$k: multiplexed: $e '$got', alone '$t': $line"
		fi
	done

	# a group larger than the PMU
	line=$(block biggroup)
	if ! grep -q "^RAN" <<<"$line" && grep -q "^=== rc [1-9]" <<<"$line" &&
		grep -q "$pmu has $((nctr - 1)) " <<<"$line" &&
		grep -q "PMUv3 cycle counter" <<<"$line"; then
		ok "$k: 8 events refused before the command ran: $(grep -o "it needs[^;]*" <<<"$line")"
	else
		fail "$k: the big group: $line"
	fi
}

# ---- boot each kernel ------------------------------------------------------
for ver in "${kernels[@]}"; do
	log=$HW/console-$ver.log
	t=$(date +%s)
	timeout 240 qemu-system-aarch64 -M virt -cpu max -smp 1 -icount shift=1 \
		-m 1024 -nographic -no-reboot -kernel "$HW/vmlinuz-$ver" \
		-initrd "$HW/initrd.gz" -append "console=ttyAMA0 quiet panic=-1" \
		</dev/null 2>&1 | tr -d '\r' >"$log"
	say "$ver: booted, ran and powered off in $(($(date +%s) - t)) s"
	if grep -q "^=== done" "$log"; then
		check "$ver" "$log"
	else
		fail "$ver: the guest did not finish: $(tail -5 "$log")"
	fi
done
say "total $(($(date +%s) - t0)) s"
finish
