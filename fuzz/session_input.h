/* SPDX-License-Identifier: MIT */
/*
 * The input of fuzz_session, shared by the target and the seed recorder
 * (fuzz/tools/seed_session.c). Little-endian, no padding:
 *   u8  mode: bit 0 per-CPU, bit 1 exclude_idle, bit 2 keep only the tree
 *       of root (below), bit 3 no sampler_counter, bit 4 build twice,
 *       bit 5 seed root as a process that existed before (name, threads,
 *       an executable mapping), bit 6 build in parts while feeding (one
 *       profile, every 16 records up to halfway between the first and the
 *       latest sample time fed), then the
 *       last part; bit 7 many CPUs: the rest of the input drives
 *       tests/cpusim.h (bits 2 and 6 as above, the others unused)
 *   u8  nr_ids (at most SESSION_INPUT_MAX_IDS)
 *   u8  sample_id_all
 *   u8  unused
 *   u32 root pid (with mode bit 2)
 *   u64 sample_type, read_format, sample_regs_user
 *   nr_ids x { u64 id; i8 role }: role >= 0 a counter index, or one of
 *       EVPROF_SESSION_SAMPLER / CPU_TIME / CUT / SWITCH_OUT (below it:
 *       SAMPLER)
 * then perf records as a ring hands them out (header.size each), fed in
 * order until one does not fit.
 */
#ifndef EVPROF_FUZZ_SESSION_INPUT_H
#define EVPROF_FUZZ_SESSION_INPUT_H

#define SESSION_INPUT_PER_CPU	  0x01
#define SESSION_INPUT_NO_IDLE	  0x02
#define SESSION_INPUT_TREE	  0x04
#define SESSION_INPUT_NO_SAMPLER  0x08
#define SESSION_INPUT_BUILD_TWICE 0x10
#define SESSION_INPUT_SEED	  0x20
#define SESSION_INPUT_PARTS	  0x40
#define SESSION_INPUT_CPUS	  0x80

#define SESSION_INPUT_HDR     32
#define SESSION_INPUT_ID      9
#define SESSION_INPUT_MAX_IDS 16
/* Counters the target declares; roles >= 0 are taken modulo this. */
#define SESSION_INPUT_COUNTERS 4

#endif /* EVPROF_FUZZ_SESSION_INPUT_H */
