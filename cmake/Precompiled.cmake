# Precompiled headers for the heavy third-party headers that most files include (CLI11, fmt,
# nlohmann/json, Eigen, Catch2): on this project's 2-core machines they are most of each file's
# parse time. INFERLAB_PCH=OFF builds without them (a check that every file includes what it uses).
option(INFERLAB_PCH "Precompile the third-party headers (CLI11, fmt, nlohmann/json, Eigen, Catch2)" ON)

# The standard and third-party headers every target's precompiled header holds.
set(INFERLAB_PCH_COMMON <algorithm> <cmath> <cstdint> <map> <memory> <optional> <string> <vector>
    <fmt/format.h> <nlohmann/json.hpp>)

# inferlab_pch(TARGET [HEADER...]): TARGET's files start from the common headers plus HEADERs.
# Files that must see their own macros before a header (a Catch2 main with CATCH_CONFIG_*) are
# marked SKIP_PRECOMPILE_HEADERS where they are listed.
function(inferlab_pch target)
  if(INFERLAB_PCH)
    target_precompile_headers(${target} PRIVATE ${INFERLAB_PCH_COMMON} ${ARGN})
  endif()
endfunction()
