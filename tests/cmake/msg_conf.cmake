# MSG endpoint conformance, control path: addresses and backlog a
# program sets (fi_setname, FI_BACKLOG), receives and registrations of
# several shapes with FI_CQ_COND_THRESHOLD and vendor_err, IPv6 over rxe,
# and the kernel objects each CQ and endpoint holds. Each says what it
# checks at its top; each runs in a few seconds in the VM.
fd_device_test(test_cm_setname)
fd_device_test(test_msg_recvv)
target_sources(fdt_common PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/device/fdt_res.c)
fd_device_test(test_res_weight)
fd_device_test(test_msg_ipv6)
# test_cm_pep_handle: an active endpoint opened with info->handle set to a
# passive endpoint takes over its address and connects from it (issue 21,
# fabtests' fi_msg_sockets); also against upstream libfabric both ways.
fd_device_test(test_cm_pep_handle)
if(COMMAND fd_interop_test)
  fd_interop_test(test_cm_pep_handle)
endif()
# test_msg_srx_post: receives posted to a shared receive context after the
# connection is up (fi_recv, fi_recvv, fi_recvmsg), both sides on an SRX
# opened from their info's rx_attr (issue 21, fabtests' fi_shared_ctx -e msg
# --no-tx-shared-ctx); also against upstream libfabric both ways.
fd_device_test(test_msg_srx_post)
if(COMMAND fd_interop_test)
  fd_interop_test(test_msg_srx_post)
endif()
