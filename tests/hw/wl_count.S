// SPDX-License-Identifier: MIT
/*
 * A whole program of known length for evprof stat (tests/hw/vm.sh): no C
 * library, nothing runs in user space but _start, which loops COUNT times
 * (given when it is built) and exits. vm.sh reads the length of _start and
 * of its loop from the disassembly: COUNT * loop + (length - loop).
 */
	.text
	.globl	_start
	.type	_start, %function
_start:
	ldr	x0, =COUNT
	mov	x9, #0
1:	add	x9, x9, #1
	eor	x10, x10, x9
	subs	x0, x0, #1
	b.ne	1b
	mov	x0, #0
	mov	x8, #93		// exit
	svc	#0
	.size	_start, .-_start
	.section .note.GNU-stack, "", %progbits
