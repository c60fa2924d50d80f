// SPDX-License-Identifier: MIT
/*
 * One perf_event_attr: flag bits newer than our uapi header, and its
 * perf_event_open(2). The bottom of the event module: probes, groups and
 * per-CPU sets all open through here.
 */
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <evprof/event.h>

#include "attr.h"

/*
 * The attr flag bits live in an unnamed u64 bitfield right after
 * read_format. evprof_attr__set_bit() addresses them by index, which
 * matches the C bitfield order only on little-endian targets (GCC and
 * Clang allocate bitfields from the least significant bit there).
 */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "evprof_attr__set_bit assumes little-endian bitfield order"
#endif
#define ATTR_FLAGS_OFFSET 40
_Static_assert(offsetof(struct perf_event_attr, read_format) + 8 ==
		   ATTR_FLAGS_OFFSET,
	       "perf_event_attr flags are expected at offset 40");

int evprof__perf_open(const struct perf_event_attr *attr, pid_t pid, int cpu,
		      int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
			  PERF_FLAG_FD_CLOEXEC | flags);

	return fd < 0 ? -1 : (int)fd;
}

void evprof_attr__set_bit(struct perf_event_attr *attr, unsigned int bit,
			  bool on)
{
	unsigned char *p = (unsigned char *)attr + ATTR_FLAGS_OFFSET;
	uint64_t flags;

	if (bit >= 64)
		return;
	memcpy(&flags, p, sizeof(flags));
	if (on)
		flags |= (uint64_t)1 << bit;
	else
		flags &= ~((uint64_t)1 << bit);
	memcpy(p, &flags, sizeof(flags));
}
