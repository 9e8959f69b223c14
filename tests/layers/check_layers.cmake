# cmake -DCC=<compiler> -DINCLUDES=<dirs;...> -DSRC=<tests/layers>
#       -DWORK=<scratch dir> -DOK=<source> -DBAD=<source> -DBAD_HEADER=<name>
#       -P check_layers.cmake
#
# Compiles two one-line sources with the include directories of one
# layer's object library: OK includes a header the layer may use and must
# build (so the setup itself works); BAD includes BAD_HEADER, a private
# header of another layer, and must fail, and fail because that header is
# not found.
set(_flags)
foreach(_d ${INCLUDES})
  list(APPEND _flags -I${_d})
endforeach()
file(MAKE_DIRECTORY ${WORK})

execute_process(COMMAND ${CC} ${_flags} -D_GNU_SOURCE -c ${SRC}/${OK}
                        -o ${WORK}/ok.o
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the layer's include setup does not even build ${OK}:\n${_out}")
endif()

execute_process(COMMAND ${CC} ${_flags} -D_GNU_SOURCE -c ${SRC}/${BAD}
                        -o ${WORK}/bad.o
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "${BAD}, including ${BAD_HEADER}, compiled: "
                      "the layer's include path reaches another layer's private headers")
endif()
string(REPLACE "." "\\." _re ${BAD_HEADER})
if(NOT _out MATCHES "${_re}" OR NOT _out MATCHES "No such file|not found")
  message(FATAL_ERROR "the forbidden include failed, but not for the include:\n${_out}")
endif()
message(STATUS "${BAD} cannot include ${BAD_HEADER}:\n${_out}")
