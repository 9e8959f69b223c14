# cmake -DCC=<compiler> -DINCLUDES=<dirs;...> -DSRC=<tests/layers>
#       -DWORK=<scratch dir> -P check_layers.cmake
#
# Compiles two one-line sources with the include directories of the core's
# object library (fd_core_objs): one including a core header must build
# (so the setup itself works), one including a verbs private header must
# fail, and fail because that header is not found.
set(_flags)
foreach(_d ${INCLUDES})
  list(APPEND _flags -I${_d})
endforeach()
file(MAKE_DIRECTORY ${WORK})

execute_process(COMMAND ${CC} ${_flags} -D_GNU_SOURCE -c ${SRC}/core_includes_core.c
                        -o ${WORK}/core_includes_core.o
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the core's include setup does not even build a core source:\n${_out}")
endif()

execute_process(COMMAND ${CC} ${_flags} -D_GNU_SOURCE -c ${SRC}/core_includes_verbs.c
                        -o ${WORK}/core_includes_verbs.o
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "a core source including fdv_internal.h compiled: "
                      "the core's include path reaches the verbs layer's private headers")
endif()
if(NOT _out MATCHES "fdv_internal\\.h" OR NOT _out MATCHES "No such file|not found")
  message(FATAL_ERROR "the upward include failed, but not for the include:\n${_out}")
endif()
message(STATUS "the core cannot include fdv_internal.h:\n${_out}")
