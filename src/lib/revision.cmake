# SPDX-License-Identifier: MIT
# Writes OUT (revision.h) with the revision of SRC as git describes it, or
# "unknown" outside a clone; rewritten only when it changes, so a build with
# nothing new compiles nothing.
#   cmake -DSRC=<source dir> -DOUT=<build>/revision.h -P revision.cmake
execute_process(COMMAND git -C ${SRC} describe --always --dirty
  OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rev)
  set(rev unknown)
endif()
set(text "#define EVPROF_REVISION \"${rev}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
