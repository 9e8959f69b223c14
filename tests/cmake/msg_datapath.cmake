# The MSG data path's request handling (issues 15 and 16).
# test_atomic_slots: 66,048 non-fetching atomics with completions unread at
#   once across 6 endpoints of one process; every context and flag checked
#   (the device must carry every one: ~70 s in a guest on a 2-core host
#   running four other guests, TIMEOUT 600).
# test_msg_more: FI_MORE chains (held, then sent in order with one post),
#   held requests dropped at close, -FI_EBADFLAGS for flags no request honours.
# test_rma_fence: a read then a FI_FENCE send of the read's buffer carries
#   the read data (the fence orders the send behind the read's response).
foreach(t test_atomic_slots test_msg_more test_rma_fence)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/device/${t}.c)
    fd_device_test(${t})
  endif()
endforeach()
foreach(t test_atomic_slots)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES TIMEOUT 600)
  endif()
endforeach()
