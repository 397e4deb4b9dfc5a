# Warnings as an INTERFACE target: every project target links inferlab_warnings.
add_library(inferlab_warnings INTERFACE)
target_compile_options(inferlab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion>)
