# cmake -DXGETTEXT=<xgettext> -DMSGCMP=<msgcmp> -DSOURCE_DIR=<repo> -DPOT=<out .pot> -P CheckCatalog.cmake
# Extracts every message the code marks for translation (tr, trf, N_; trc and NC_ with a context) from apps/ and lib/ and fails
# when po/zh_CN.po lacks one of them: nobody can add a message that a Chinese run would print in
# English. The sources are listed when the check runs, so a new file is covered without editing this.
file(GLOB_RECURSE sources LIST_DIRECTORIES false
  ${SOURCE_DIR}/apps/*.cpp ${SOURCE_DIR}/apps/*.hpp ${SOURCE_DIR}/lib/*.cpp ${SOURCE_DIR}/lib/*.hpp
  ${SOURCE_DIR}/lib/*.cu ${SOURCE_DIR}/lib/*.cuh)
list(SORT sources)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C.UTF-8 ${XGETTEXT} --language=C++ --from-code=UTF-8
          -k -ktr -ktrf -kN_ -ktrc:1c,2 -kNC_:1c,2 --no-location -o ${POT} ${sources}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xgettext failed:\n${err}")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C.UTF-8 ${MSGCMP} ${SOURCE_DIR}/po/zh_CN.po ${POT}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "po/zh_CN.po lacks messages the code marks for translation (add and translate them):\n${err}")
endif()
