#pragma once
// decode-roofline's printers: one RooflineResult as text, --json, --csv tables and --explain, side
// by side in decode_roofline_print.cpp. They choose what to print; every number comes from the library.
#include "common.hpp"
#include "inferlab/answer/decode_roofline.hpp"
#include "roofline_flags.hpp"

namespace inferlab::app {

// Every form of decode-roofline's answer; tables: rows, and generation with --prompt-len.
Report decode_roofline_report(const RooflineInputs& in, const RooflineResult& res);
// --list-hw: the hardware presets with their sources (table "hardware").
Report hardware_report();

}  // namespace inferlab::app
