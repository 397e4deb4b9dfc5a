# Run by CTest: installs the build into PREFIX, then runs the installed binary.
# cmake -DBUILD_DIR=... -DPREFIX=... -P CheckInstall.cmake
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(bin "${PREFIX}/bin/inferlab")
if(NOT EXISTS "${bin}")
  message(FATAL_ERROR "cmake --install did not write ${bin}")
endif()
execute_process(COMMAND "${bin}" verify RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "passed, 0 failed")
  message(FATAL_ERROR "the installed inferlab verify exited ${rc}:\n${out}\n${err}")
endif()
file(REMOVE_RECURSE "${PREFIX}")
