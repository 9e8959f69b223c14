# RDM layer (#14): counters on the host, FI_EP_RDM device tests in
# tests/rdm (tests/rdm/README.md says what each checks).

# host: fdm_cntr without a device (it never touches its domain)
add_executable(test_cntr ${CMAKE_CURRENT_SOURCE_DIR}/host/test_cntr.c)
target_include_directories(test_cntr PRIVATE ${FD_SRC}/src ${FD_SRC}/prov_verbs/rdm)
target_compile_definitions(test_cntr PRIVATE _GNU_SOURCE)
target_link_libraries(test_cntr PRIVATE fabric::fabric)
target_compile_options(test_cntr PRIVATE ${FD_WARNINGS})
add_test(NAME test_cntr COMMAND test_cntr)
set_tests_properties(test_cntr PROPERTIES SKIP_RETURN_CODE 77 LABELS unit TIMEOUT 60)
