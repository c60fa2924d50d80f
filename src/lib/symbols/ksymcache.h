/* SPDX-License-Identifier: MIT */
/*
 * The running kernel's symbols through a copy of /proc/kallsyms kept for
 * this boot and set of loaded modules. Reading /proc/kallsyms makes the
 * kernel format each of its 100,000+ lines: tens of milliseconds of system
 * time in every run that meets a kernel frame, half of what a short
 * recording costs. The copy is the parsed table (evprof__kallsyms_save()),
 * mapped: a lookup touches a few of its pages, nothing is parsed. Copies
 * are only ever replaced by rename: one cut in place by another writer
 * would kill a run that maps it (SIGBUS). The image's text and a
 * module's do not move within a boot (the key: boot id, and each module's
 * name, size, address and build id), but BPF programs and trampolines come
 * and go: a lookup that falls outside the image's and the modules' text
 * (evprof__ksym.inside) needs /proc/kallsyms as it is now. A module
 * without a build id note, built anew and loaded again at the same address
 * with the same size, keeps the key: its names are the copy's until the
 * next boot.
 */
#ifndef EVPROF_LIB_KSYMCACHE_H
#define EVPROF_LIB_KSYMCACHE_H

#include <stdbool.h>

#include "kallsyms.h"
#include "base/base.h"

/*
 * Kernel symbols from the copy in dir (a regular file of this user's, not
 * a link), else from /proc/kallsyms, whose table then replaces the copies
 * in dir (made if missing; mode 0600: kernel addresses). fresh: from
 * /proc/kallsyms even when there is a copy. *cached: the table came from
 * the copy. Returns the table, or NULL with errno set (hidden: as
 * evprof__kallsyms_load()).
 */
EVPROF_HIDDEN struct evprof__kallsyms *
evprof__ksymcache_load(const char *dir, bool fresh, bool *hidden, bool *cached);

/*
 * The table of the kallsyms file at path (perf's copy of a recording's
 * kernel, say) through a saved copy in dir, keyed by its path, device,
 * inode, size and modification time: parsed once, mapped after. A path
 * that is not a regular file is read as it is. Returns as
 * evprof__kallsyms_load().
 */
EVPROF_HIDDEN struct evprof__kallsyms *
evprof__ksymcache_file(const char *dir, const char *path, bool *hidden);

#endif /* EVPROF_LIB_KSYMCACHE_H */
