#!/bin/sh
# Runs inside the arm64 guest (tests/hw/vm.sh): the hardware recordings,
# each output between "=== begin NAME" and "=== end NAME" on the console,
# profiles as base64. The host checks them; nothing is judged here.
N=$(cat /hw/n)
P=100000 # cycles per sample: far below the throttle (20 000 was throttled)
export PATH=/hw:/bin
cd /tmp || exit 1
block() { # NAME COMMAND...: the command's output and stderr as block NAME
	name=$1
	shift
	echo "=== begin $name"
	"$@" 2>&1
	echo "=== rc $?"
	echo "=== end $name"
}
b64() { # NAME FILE
	echo "=== begin $1"
	base64 "$2"
	echo "=== end $1"
}
block uname uname -r
block dmesg sh -c 'dmesg | grep -i -e pmu -e "hw perfevents"'
block info evprof info
block count evprof stat -e cycles:u,instructions:u -- wl_count
# cycles:u sampling, instructions:u counted with it.
block loops evprof record -e "cycles/period=$P/:u,instructions:u" -o loops.pb.gz \
	-- wl_hw loops "$N"
b64 loops.pb.gz loops.pb.gz
# User stacks unwound with the CFI instead of the frame records.
block dwarf evprof record -g dwarf -e "cycles/period=$P/:u" -o dwarf.pb.gz \
	-- wl_hw loops "$N"
b64 dwarf.pb.gz dwarf.pb.gz
block threads evprof record -e "cycles/period=$P/:u,instructions:u" -o threads.pb.gz \
	-- wl_hw threads "$N"
b64 threads.pb.gz threads.pb.gz
# instructions as the sampler: QEMU delivers few of its overflows.
block insn evprof record -e "instructions/period=$((P / 2))/:u,cycles:u" -o insn.pb.gz \
	-- wl_hw loops "$N"
b64 insn.pb.gz insn.pb.gz
# Multiplexing: user and kernel instructions over loops and system calls,
# alone and with more events than counters.
M="mux 40 $((N / 20)) 2000"
block mux_u evprof stat -e instructions:u -- wl_hw $M
block mux_k evprof stat -e instructions:k -- wl_hw $M
block mux_all evprof stat -e instructions:u,instructions:k,cycles:u,cycles:k,r08:u,r08:k,r11:u,r11:k,r1b:u -- wl_hw $M
# A group larger than the PMU: refused before the command runs.
block biggroup evprof record -e '{cycles:u,instructions:u,r08,r1b,r11:k,r08:k,r1b:k,r08:h}' -o big.pb.gz -- sh -c 'echo RAN'
echo "=== done"
