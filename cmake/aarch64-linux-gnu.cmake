# Cross-builds evprof for arm64 with Debian's gcc-aarch64-linux-gnu against
# a sysroot from scripts/arm64-sysroot.sh:
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DEVPROF_SYSROOT=DIR ...
# Steps that run a built program (the man pages) run it under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# try_compile() projects read this file again: pass them the sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EVPROF_SYSROOT)
if(NOT EVPROF_SYSROOT)
  message(FATAL_ERROR "EVPROF_SYSROOT: the arm64 sysroot (scripts/arm64-sysroot.sh)")
endif()
set(CMAKE_SYSROOT ${EVPROF_SYSROOT})
set(CMAKE_FIND_ROOT_PATH ${EVPROF_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${EVPROF_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
  "${EVPROF_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${EVPROF_SYSROOT}/usr/share/pkgconfig")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${EVPROF_SYSROOT})
