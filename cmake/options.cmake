# Every option of the project, in one place. The knobs that reach the
# inline data path become compile-time constants in fdv_config.h, which
# the provider's inline code folds away; keep them few.
set(FABRIC_DIRECT "verbs" CACHE STRING
    "Data path: 'verbs' compiles it inline into the application, 'OFF' goes through ops tables")
set_property(CACHE FABRIC_DIRECT PROPERTY STRINGS verbs OFF)
set(FABRIC_DIRECT_THREADING "domain" CACHE STRING
    "'domain': no lock on the data path (FI_THREAD_DOMAIN); 'safe': a lock per object (FI_THREAD_SAFE)")
set_property(CACHE FABRIC_DIRECT_THREADING PROPERTY STRINGS domain safe)
option(FABRIC_DIRECT_RSTREAM "Build rstream (FI_EP_SOCK_STREAM) endpoints" ON)
option(FABRIC_DIRECT_RDM "Build RDM (FI_EP_RDM, verbs;ofi_rxm) endpoints" ON)
option(FABRIC_DIRECT_WERROR "Treat warnings as errors" OFF)
option(FABRIC_DIRECT_TESTS "Build the tests" ${PROJECT_IS_TOP_LEVEL})
option(FABRIC_DIRECT_BENCH "Build the benchmarks" ${PROJECT_IS_TOP_LEVEL})
option(FABRIC_DIRECT_UTILS "Build and install fd_fi_info and fd_fi_strerror" ${PROJECT_IS_TOP_LEVEL})
# The libFuzzer targets are the same code in every build variant: one
# build (CI: the direct one) is enough to fuzz. They need clang.
option(FABRIC_DIRECT_FUZZ "Build and run the libFuzzer tests (needs clang)" ON)
option(FABRIC_DIRECT_SOAK "Add the 10-minute soak test (test_soak)" OFF)
# FABRIC_DIRECT_SANITIZE="address,undefined" or "thread" builds every target
# of the project (library, tests, examples, tools, benchmarks) instrumented;
# tests/cmake/sanitize.cmake gives the tests their runtime options.
set(FABRIC_DIRECT_SANITIZE "" CACHE STRING
    "Sanitizers for all targets: '' (none), 'address,undefined' or 'thread'")
set_property(CACHE FABRIC_DIRECT_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

string(TOLOWER "${FABRIC_DIRECT}" _fd_mode)
if(_fd_mode STREQUAL "verbs")
  set(FD_DIRECT ON)
elseif(_fd_mode MATCHES "^(off|0|false|no)$")
  set(FD_DIRECT OFF)
else()
  message(FATAL_ERROR "FABRIC_DIRECT must be 'verbs' or 'OFF', not '${FABRIC_DIRECT}'")
endif()
if(FABRIC_DIRECT_THREADING STREQUAL "safe")
  set(FDV_THREAD_SAFE 1)
elseif(FABRIC_DIRECT_THREADING STREQUAL "domain")
  set(FDV_THREAD_SAFE 0)
else()
  message(FATAL_ERROR "FABRIC_DIRECT_THREADING must be 'domain' or 'safe'")
endif()
# Locked ops tables beside the lock-free ones: only where no application
# inlines the data path and the data path has no lock of its own.
if(NOT FD_DIRECT AND NOT FDV_THREAD_SAFE)
  set(FDV_OPS_LOCKED 1)
else()
  set(FDV_OPS_LOCKED 0)
endif()
if(FABRIC_DIRECT_RSTREAM)
  set(FD_HAVE_RSTREAM 1)
else()
  set(FD_HAVE_RSTREAM 0)
endif()
# Any layer over verbs compiled in: the direct wrappers then test the
# endpoint kind (fdv_config.h). Layers only ever add to this list.
if(FABRIC_DIRECT_RDM)
  set(FD_HAVE_RDM 1)
else()
  set(FD_HAVE_RDM 0)
endif()
if(FD_HAVE_RSTREAM OR FD_HAVE_RDM)
  set(FDV_EP_LAYERS 1)
else()
  set(FDV_EP_LAYERS 0)
endif()
# Which layers exist, for the core's provider list, fd_fi_info and tests.
add_compile_definitions(FD_HAVE_RSTREAM=${FD_HAVE_RSTREAM} FD_HAVE_RDM=${FD_HAVE_RDM})

# The OFF build can also link the library as a drop-in libfabric.so.1
# (docs/dropin.md); the direct build cannot (its data path is inline).
if(FD_DIRECT)
  set(FABRIC_DIRECT_LIBFABRIC_SO OFF)
else()
  option(FABRIC_DIRECT_LIBFABRIC_SO
         "Also build a drop-in libfabric.so.1 (into <build>/libfabric)" ON)
endif()

if(FABRIC_DIRECT_SANITIZE AND
   NOT FABRIC_DIRECT_SANITIZE MATCHES "^(address,undefined|undefined,address|address|undefined|thread)$")
  message(FATAL_ERROR "FABRIC_DIRECT_SANITIZE must be '', 'address,undefined' or 'thread', "
                      "not '${FABRIC_DIRECT_SANITIZE}'")
endif()
