# Cross-compiling specflash for 64-bit Arm Linux (NEON) on a Debian x86-64 machine, with
# Debian's cross compiler and the arm64 (multiarch) -dev packages:
# scripts/arm_cross_check.sh installs them, configures with this file and runs the kernel
# tests under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Headers that are the same on every architecture (nlohmann-json, CLI11) live under
# /usr/include and /usr/share; libraries come from the multiarch folders only.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# pkg-config must read the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# gtest_discover_tests runs the test binaries at build time: through qemu. Without `-L`:
# the binaries then load the arm64 multiarch glibc (libc6:arm64, /lib/ld-linux-aarch64.so.1)
# as a whole. With `-L /usr/aarch64-linux-gnu`, the cross sysroot's ld.so met the multiarch
# libc.so.6 and every pthread_create hung.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
