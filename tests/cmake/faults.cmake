# Fault tests: a peer killed mid-transfer, a listener that never
# accepts, nothing listening, an unreachable address, a receiver without
# receives (RNR). One binary, one ctest per case and endpoint kind; each
# checks the error, a new connection afterwards and the device's object
# counts (iproute2's rdma tool). Both ends share rxe0 in one VM; link
# faults need two VMs (tests/rxe/run2, tests/faults/link_fault.sh).
add_library(flt_common STATIC ${CMAKE_CURRENT_SOURCE_DIR}/faults/flt.c)
target_include_directories(flt_common PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/faults
                           ${CMAKE_CURRENT_SOURCE_DIR}/device)
target_compile_options(flt_common PRIVATE ${FD_WARNINGS})
if(FABRIC_DIRECT_RSTREAM)
  target_compile_definitions(flt_common PUBLIC FLT_HAVE_RSTREAM)
  target_link_libraries(flt_common PUBLIC rst_common)
  set(FD_FAULT_KINDS msg rstream)
else()
  target_link_libraries(flt_common PUBLIC fdt_common)
  set(FD_FAULT_KINDS msg)
endif()

add_executable(test_faults ${CMAKE_CURRENT_SOURCE_DIR}/faults/test_faults.c)
target_link_libraries(test_faults PRIVATE flt_common)
target_compile_options(test_faults PRIVATE ${FD_WARNINGS})

foreach(kind ${FD_FAULT_KINDS})
  foreach(c kill noaccept refused timeout)
    add_test(NAME fault_${c}_${kind} COMMAND test_faults ${c} ${kind})
  endforeach()
endforeach()
add_test(NAME fault_rnr_msg COMMAND test_faults rnr msg)
# the same never-answering listener, with the provider's connect deadline
add_test(NAME fault_noaccept_deadline_msg COMMAND test_faults noaccept msg)
set_tests_properties(fault_noaccept_deadline_msg PROPERTIES SKIP_RETURN_CODE 77
                     LABELS "device;faults" TIMEOUT 300
                     ENVIRONMENT "FI_VERBS_CONNECT_TIMEOUT=3000")
foreach(kind ${FD_FAULT_KINDS})
  foreach(c kill noaccept refused timeout)
    set_tests_properties(fault_${c}_${kind} PROPERTIES SKIP_RETURN_CODE 77
                         LABELS "device;faults" TIMEOUT 300)
  endforeach()
endforeach()
set_tests_properties(fault_rnr_msg PROPERTIES SKIP_RETURN_CODE 77
                     LABELS "device;faults" TIMEOUT 300)
# The connection-setup faults exercise only the control path (rdma_cm
# events, the connect deadline, the EQ's error entry), which is the same
# compiled code in every build: CI runs them in one build (label
# "one-build"; tests/run-all.sh leaves them out of the OFF build's run).
# Most of their time is waiting out rdma_cm's own timeouts.
foreach(kind ${FD_FAULT_KINDS})
  foreach(c noaccept refused timeout)
    set_property(TEST fault_${c}_${kind} APPEND PROPERTY LABELS one-build)
  endforeach()
endforeach()
set_property(TEST fault_noaccept_deadline_msg APPEND PROPERTY LABELS one-build)
# Under the sanitizers: the killed peer only (teardown on error paths).
foreach(kind ${FD_FAULT_KINDS})
  set_property(TEST fault_kill_${kind} APPEND PROPERTY LABELS asan)
endforeach()

# Link down/up needs a real wire: two VMs (tests/rxe/run2). Not a ctest
# (it would be skipped in a one-VM run); run it as
#   tests/rxe/run2 -- BUILD/tests/test_link_fault ::: BUILD/tests/test_link_fault
add_executable(test_link_fault ${CMAKE_CURRENT_SOURCE_DIR}/faults/test_link_fault.c)
target_link_libraries(test_link_fault PRIVATE flt_common)
target_compile_options(test_link_fault PRIVATE ${FD_WARNINGS})
