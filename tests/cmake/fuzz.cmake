# libFuzzer targets of issue #8 (tests/fuzz): the CM private-data decoder and
# fi_getinfo's hint handling. Built with clang whatever the project's
# compiler is (libFuzzer needs clang's runtime: Debian clang +
# libclang-rt-dev); no clang, no tests.
#
#   fuzz_<target>          fuzzes for 20 s from the committed seeds (unit)
#   fuzz_<target>_regress  runs the target once on every file of
#                          tests/fuzz/regress/<target>/ and the seeds (unit)
if(NOT FABRIC_DIRECT_FUZZ)
  return()
endif()
find_program(FD_CLANG NAMES clang)
if(NOT FD_CLANG)
  message(STATUS "clang not found: no libFuzzer tests (fuzz_cm_data, fuzz_getinfo_hints)")
  return()
endif()

set(_fz_flags -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
              -fno-sanitize-recover=all -Wall -Wextra -Werror)
set(_fz_dir ${FD_SRC}/tests/fuzz)

# fuzz_cm_data: the framing code links alone (prov_verbs/fdv_cm_data.c).
set(_fz_cm ${CMAKE_CURRENT_BINARY_DIR}/fuzz_cm_data)
add_custom_command(OUTPUT ${_fz_cm}
  COMMAND ${FD_CLANG} ${_fz_flags} -I${FD_SRC}/include -I${FD_SRC}/prov_verbs
          ${_fz_dir}/fuzz_cm_data.c ${FD_SRC}/prov_verbs/fdv_cm_data.c -o ${_fz_cm}
  DEPENDS ${_fz_dir}/fuzz_cm_data.c ${FD_SRC}/prov_verbs/fdv_cm_data.c
          ${FD_SRC}/prov_verbs/fdv_cm_data.h
  COMMENT "libFuzzer target fuzz_cm_data")
add_custom_target(fuzz_cm_data_bin ALL DEPENDS ${_fz_cm})

# fuzz_getinfo_hints: the whole library compiled again with its test seam
# (-DFDV_TEST_SEAMS: made-up devices for fi_getinfo), which the library
# itself never contains. Control path only, so the OFF include path serves
# both builds.
file(GLOB _fz_lib_headers CONFIGURE_DEPENDS ${FD_SRC}/src/*.h ${FD_SRC}/src/include/*.h ${FD_SRC}/prov_verbs/*.h
     ${FD_SRC}/prov_verbs/rstream/*.h ${FD_SRC}/prov_verbs/include/fdv/*.h
     ${FD_SRC}/include/rdma/*.h)
set(_fz_gi ${CMAKE_CURRENT_BINARY_DIR}/fuzz_getinfo_hints)
add_custom_command(OUTPUT ${_fz_gi}
  COMMAND ${FD_CLANG} ${_fz_flags} -DFDV_TEST_SEAMS
          -I${FD_SRC}/include -I${FD_SRC}/prov_verbs/include -I${FD_GEN_INCLUDE}
          -I${FD_SRC}/src -I${FD_SRC}/src/include -I${FD_SRC}/prov_verbs -I${FD_SRC}/prov_verbs/rstream
          ${_fz_dir}/fuzz_getinfo_hints.c ${FD_CORE_SOURCES} ${FD_VERBS_SOURCES}
          ${RDMACM_LIBRARY} ${IBVERBS_LIBRARY} -lpthread -o ${_fz_gi}
  DEPENDS ${_fz_dir}/fuzz_getinfo_hints.c ${FD_CORE_SOURCES} ${FD_VERBS_SOURCES}
          ${_fz_lib_headers} ${FD_GEN_INCLUDE}/fdv/fdv_config.h
  COMMENT "libFuzzer target fuzz_getinfo_hints (the library with its test seam)")
add_custom_target(fuzz_getinfo_hints_bin ALL DEPENDS ${_fz_gi})

foreach(t cm_data getinfo_hints)
  set(_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz_${t})
  file(GLOB _seeds CONFIGURE_DEPENDS ${_fz_dir}/seeds/${t}/*)
  file(GLOB _regress CONFIGURE_DEPENDS ${_fz_dir}/regress/${t}/*)
  list(JOIN _seeds "," _seedlist)
  # Seeds are passed as files, so the fuzzer never writes into the source
  # tree; findings land in the build directory.
  add_test(NAME fuzz_${t}
           COMMAND ${_bin} -max_total_time=20 -timeout=10 -seed_inputs=${_seedlist}
                   -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz_${t}-)
  # Files as arguments: each runs once, no fuzzing; any crash, sanitizer
  # report, leak or failed check fails the test.
  add_test(NAME fuzz_${t}_regress COMMAND ${_bin} ${_regress} ${_seeds})
  set_tests_properties(fuzz_${t} fuzz_${t}_regress PROPERTIES LABELS unit TIMEOUT 180)
endforeach()
