/* SPDX-License-Identifier: MIT */
/*
 * The page's template, CSS and scripts, compiled in from web/ by
 * web/embed.cmake (build/page_assets.c). Each is NUL-terminated; all are
 * empty when the build had no node/npm (the page is then unavailable).
 */
#ifndef EVPROF_LIB_PAGE_ASSETS_H
#define EVPROF_LIB_PAGE_ASSETS_H

#include "base/base.h"

EVPROF_HIDDEN extern const char evprof__page_html[];
EVPROF_HIDDEN extern const char evprof__page_css[];
EVPROF_HIDDEN extern const char evprof__page_js[];

#endif /* EVPROF_LIB_PAGE_ASSETS_H */
