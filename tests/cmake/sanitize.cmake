# Sanitizer runs: included at the end of tests/CMakeLists.txt.
# When the project is configured with FABRIC_DIRECT_SANITIZE (top-level
# CMakeLists.txt instruments every target), every test of this directory
# gets the sanitizer runtime options through its ENVIRONMENT, so a plain
# `ctest` (inside tests/rxe/run for the device tests) fails on any report:
#   ASan/UBSan/LSan: the first error ends the process with a non-zero code
#   (never 77, ctest's skip code); leaks found at exit fail the test.
#   TSan: a reported race ends the process with exit code 66.
# The suppression files list only rdma-core and system frames; see them.

if(NOT FABRIC_DIRECT_SANITIZE)
  return()
endif()

set(FD_SAN_DIR ${CMAKE_CURRENT_SOURCE_DIR}/sanitizers)
get_property(_fd_san_tests DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY TESTS)

if(FABRIC_DIRECT_SANITIZE MATCHES "address|undefined")
  # detect_leaks: LeakSanitizer at exit; its exit code (23) fails the test.
  # abort_on_error=0 keeps that exit code instead of a core-dumping SIGABRT
  # (slow in the VM). Forked children (the client side of a device test)
  # check their own leaks when they exit, and fdt's parent fails on their
  # non-zero exit.
  set(_fd_san_env
      "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_string_checks=1"
      "LSAN_OPTIONS=exitcode=23:report_objects=0:suppressions=${FD_SAN_DIR}/lsan.supp"
      "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=1")
  # Forked test processes end in _exit(), which skips LeakSanitizer's
  # exit-time check: route the test programs' own _exit() calls through a
  # wrapper that runs it (tests/sanitizers/lsan_exit.c).
  if(FABRIC_DIRECT_SANITIZE MATCHES "address")
    add_library(fd_lsan_exit STATIC ${FD_SAN_DIR}/lsan_exit.c)
    get_property(_fd_san_targets DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(_t ${_fd_san_targets})
      get_target_property(_type ${_t} TYPE)
      if(_type STREQUAL "EXECUTABLE")
        target_link_libraries(${_t} PRIVATE fd_lsan_exit)
        target_link_options(${_t} PRIVATE "LINKER:--wrap=_exit")
      endif()
    endforeach()
  endif()
elseif(FABRIC_DIRECT_SANITIZE STREQUAL "thread")
  set(_fd_san_env
      "TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=${FD_SAN_DIR}/tsan.supp")
endif()

if(_fd_san_tests)
  # appended: a test's own ENVIRONMENT entries stay
  set_property(TEST ${_fd_san_tests} APPEND PROPERTY ENVIRONMENT ${_fd_san_env})
endif()

# The hot-path check reads the machine code of the data path, which the
# sanitizers fill with calls of their own: it means nothing in these builds.
# The drop-in ABI test runs under valgrind, which cannot run a sanitized
# program.
foreach(_t hotpath_no_indirect_call hotpath_ops_table dropin_abi_compat)
  if(TEST ${_t})
    set_tests_properties(${_t} PROPERTIES DISABLED TRUE)
  endif()
endforeach()
