# libFuzzer targets (tests/fuzz): the CM private-data decoder, fi_getinfo's
# hint handling, and rstream's blob and message decoders. They are normal
# targets of a clang build (libFuzzer is clang's: Debian clang +
# libclang-rt-dev); other compilers build none.
#
#   fuzz_<target>          fuzzes for 20 s from the committed seeds
#   fuzz_<target>_regress  runs the target once on every file of
#                          tests/fuzz/regress/<target>/ and the seeds
if(NOT FABRIC_DIRECT_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(STATUS "no libFuzzer tests: they need clang (CMAKE_C_COMPILER=clang)")
  return()
endif()

set(_fz_dir ${FD_SRC}/tests/fuzz)
set(_fz_san -fsanitize=address,undefined -fno-sanitize-recover=all)

# fuzz_getinfo_hints links the library's layers compiled once more with
# their test seam (-DFDV_TEST_SEAMS: made-up devices for fi_getinfo), which
# the library itself never contains.
fd_layer_objects(_fuzz DEFINITIONS FDV_TEST_SEAMS
                 OPTIONS -fsanitize=fuzzer-no-link ${_fz_san})

# fd_fuzz_target(<name> <seed directory name> <sources>...)
function(fd_fuzz_target name seeds)
  add_executable(fuzz_${name} ${_fz_dir}/fuzz_${name}.c ${ARGN})
  target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${_fz_san} ${FD_WARNINGS})
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer ${_fz_san})
  target_compile_definitions(fuzz_${name} PRIVATE _GNU_SOURCE)
  file(GLOB _seeds CONFIGURE_DEPENDS ${_fz_dir}/seeds/${seeds}/*)
  file(GLOB _regress CONFIGURE_DEPENDS ${_fz_dir}/regress/${name}/*)
  list(JOIN _seeds "," _seedlist)
  if(_seedlist)
    set(_seedarg -seed_inputs=${_seedlist})
  else()
    set(_seedarg)
  endif()
  # Seeds are passed as files, so the fuzzer never writes into the source
  # tree; findings land in the build directory.
  add_test(NAME fuzz_${name}
           COMMAND fuzz_${name} -max_total_time=20 -timeout=10 ${_seedarg}
                   -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz_${name}-)
  set_tests_properties(fuzz_${name} PROPERTIES LABELS "host;fuzz" TIMEOUT 180)
  # Files as arguments: each runs once, no fuzzing; any crash, sanitizer
  # report, leak or failed check fails the test.
  if(EXISTS ${_fz_dir}/regress/${name})
    add_test(NAME fuzz_${name}_regress COMMAND fuzz_${name} ${_regress} ${_seeds})
    set_tests_properties(fuzz_${name}_regress PROPERTIES LABELS "host;fuzz" TIMEOUT 180)
  endif()
endfunction()

# The framing code links alone.
fd_fuzz_target(cm_data cm_data ${FD_SRC}/prov_verbs/verbs/fdv_cm_data.c)
target_include_directories(fuzz_cm_data PRIVATE ${FD_SRC}/include ${FD_SRC}/prov_verbs/verbs)

fd_fuzz_target(getinfo_hints getinfo_hints ${FD_LAYER_OBJECTS_fuzz})
target_compile_definitions(fuzz_getinfo_hints PRIVATE FDV_TEST_SEAMS)
target_include_directories(fuzz_getinfo_hints PRIVATE ${FD_SRC}/src ${FD_SRC}/src/include
                           ${FD_SRC}/prov_verbs/verbs ${FD_SRC}/prov_verbs/layer)
target_link_libraries(fuzz_getinfo_hints PRIVATE fd_layer_flags)

if(FABRIC_DIRECT_RSTREAM)
  foreach(t blob msg)
    fd_fuzz_target(rstream_${t} ${t} ${FD_SRC}/prov_verbs/rstream/fdr_proto.c)
    target_include_directories(fuzz_rstream_${t} PRIVATE ${FD_SRC}/prov_verbs/rstream
                               ${FD_SRC}/src/include ${FD_SRC}/include)
  endforeach()
endif()
