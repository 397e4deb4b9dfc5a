# ASan + UBSan as an INTERFACE target, switched on by INFERLAB_SANITIZE.
add_library(inferlab_sanitizers INTERFACE)
if(INFERLAB_SANITIZE)
  target_compile_options(inferlab_sanitizers INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(inferlab_sanitizers INTERFACE -fsanitize=address,undefined)
endif()
