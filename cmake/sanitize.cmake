# -DSPECFLASH_SANITIZE=address,undefined (ASan+UBSan) or =thread (TSan): every target,
# tests included, is compiled and linked with that sanitizer. Use a build folder of its
# own (scripts/sanitize.sh uses build-asan and build-tsan). UBSan findings abort (no
# recovery), so a test that triggers one fails.
set(SPECFLASH_SANITIZE "" CACHE STRING "Sanitizers: address,undefined or thread (empty: none)")
if(SPECFLASH_SANITIZE)
  set(SPECFLASH_SANITIZE_FLAGS -fsanitize=${SPECFLASH_SANITIZE} -fno-omit-frame-pointer -g)
  if(SPECFLASH_SANITIZE MATCHES "undefined")
    list(INSERT SPECFLASH_SANITIZE_FLAGS 1 -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${SPECFLASH_SANITIZE_FLAGS})
  add_link_options(${SPECFLASH_SANITIZE_FLAGS})
endif()
if(SPECFLASH_SANITIZE)
  # The Highway kernels compile once per SIMD target; instrumented, each takes over ten
  # minutes (uninstrumented: ~20 s). They are left uninstrumented: the sanitizers then check
  # everything around them (buffers are allocated, sized and shared by instrumented code),
  # but not the kernels' own loads and stores, which the kernel unit tests compare with the
  # scalar reference on every size and tail. Stated in docs/robustness.md.
  file(GLOB simd_kernels ${CMAKE_SOURCE_DIR}/src/quant/*simd*.cc ${CMAKE_SOURCE_DIR}/src/ops/*simd*.cc)
  set_source_files_properties(${simd_kernels} PROPERTIES COMPILE_OPTIONS -fno-sanitize=all)
endif()
