# -DSPECFLASH_FUZZ=ON (clang only; use its own build folder, e.g. build-fuzz): every source
# is compiled with libFuzzer coverage, ASan and UBSan, and one fuzz_<name> executable is
# built per fuzz/fuzz_<name>.cc. The entry points live in tests/robustness so that the
# normal build's corpus replay test runs exactly the same code (docs/robustness.md).
# Tests can be built in the same folder: they then run under ASan+UBSan too.
option(SPECFLASH_FUZZ "Build the libFuzzer targets in fuzz/ (clang; ASan+UBSan)" OFF)
if(SPECFLASH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SPECFLASH_FUZZ needs clang: -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(SPECFLASH_SANITIZE AND NOT SPECFLASH_SANITIZE STREQUAL "address,undefined")
    message(FATAL_ERROR "SPECFLASH_FUZZ uses ASan+UBSan; it cannot be combined with SPECFLASH_SANITIZE=${SPECFLASH_SANITIZE}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  set(SPECFLASH_SANITIZE "address,undefined" CACHE STRING "" FORCE)
endif()
include(${CMAKE_SOURCE_DIR}/cmake/sanitize.cmake)
if(SPECFLASH_FUZZ)
  set(SPECFLASH_FUZZ_SHARED_DIR "${CMAKE_SOURCE_DIR}/../shared" CACHE PATH "shared/ folder for the fuzz seeds")
  file(GLOB fuzz_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/fuzz/fuzz_*.cc)
  foreach(src ${fuzz_sources})
    get_filename_component(name ${src} NAME_WE)
    # chat_format.cc is the one piece of the CLI a target needs: compiled in, so fuzzing
    # does not wait for the whole CLI library.
    add_executable(${name} ${src} ${CMAKE_SOURCE_DIR}/tests/robustness/fuzz_entry_points.cc
                           ${CMAKE_SOURCE_DIR}/src/cli/chat_format.cc)
    target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/robustness)
    target_compile_definitions(${name} PRIVATE SPECFLASH_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                                               SPECFLASH_SHARED_DIR="${SPECFLASH_FUZZ_SHARED_DIR}")
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE specflash_server)
  endforeach()
endif()
