# Load and soak.
# test_load_256eps: 256 MSG connections at once, checked traffic on each
# (both ends on rxe0 in one VM).
# test_soak_short: mixed MSG / RMA / rstream traffic for 20 s with no loss
# and flat memory; FABRIC_DIRECT_SOAK=ON adds test_soak, the same for 600 s
# (FD_SOAK_SECONDS overrides the duration of either at run time).

add_executable(test_load_256eps ${CMAKE_CURRENT_SOURCE_DIR}/load/test_load_256eps.c
               ${CMAKE_CURRENT_SOURCE_DIR}/faults/flt.c)
target_include_directories(test_load_256eps PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/faults
                           ${CMAKE_CURRENT_SOURCE_DIR}/device)
target_link_libraries(test_load_256eps PRIVATE fdt_common)
target_compile_options(test_load_256eps PRIVATE ${FD_WARNINGS})
add_test(NAME test_load_256eps COMMAND test_load_256eps 256)
set_tests_properties(test_load_256eps PROPERTIES SKIP_RETURN_CODE 77
                     LABELS "device;load" TIMEOUT 900)

if(FABRIC_DIRECT_RSTREAM AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/load/test_soak.c)
  add_executable(test_soak ${CMAKE_CURRENT_SOURCE_DIR}/load/test_soak.c)
  target_link_libraries(test_soak PRIVATE flt_common)
  target_compile_options(test_soak PRIVATE ${FD_WARNINGS})
  add_test(NAME test_soak_short COMMAND test_soak 20)
  set_tests_properties(test_soak_short PROPERTIES SKIP_RETURN_CODE 77
                       LABELS "device;load" TIMEOUT 300)
  if(FABRIC_DIRECT_SOAK)
    add_test(NAME test_soak COMMAND test_soak 600)
    set_tests_properties(test_soak PROPERTIES SKIP_RETURN_CODE 77
                         LABELS "device;soak;slow" TIMEOUT 1200)
  endif()
endif()
