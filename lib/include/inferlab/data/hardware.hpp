#pragma once
// Hardware presets (examples/hardware.json, compiled in): bandwidth, dense BF16 peak, memory,
// each with its source and the unit convention of that source.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inferlab {

struct Hardware {
    std::string name;
    std::string kind;                      // gpu, cpu, teaching
    double bandwidth = 0;                  // B/s
    std::string bandwidth_text;            // as the source prints it: "3.35TB/s"
    std::optional<double> peak_flops;      // dense BF16 FLOP/s
    std::string flops_text;
    std::optional<std::uint64_t> memory_bytes;
    std::string memory_text;
    // The link between devices for tensor parallelism: one direction's bandwidth and a per-call
    // all-reduce latency, with their note (English and Chinese); absent for a device without one.
    std::optional<double> link_bandwidth;
    std::string link_bandwidth_text;
    std::optional<double> link_latency_s;
    std::string link_note, link_note_zh;
    std::string notes;                     // unit conventions of the source
    std::string source;
    // The notes and the source in Chinese (the preset's notes_zh and source_zh), for --lang zh;
    // the English above is what --json prints in every language.
    std::string notes_zh, source_zh;
    // The notes and the source in the current language (i18n.hpp's language()), for text output.
    const std::string& notes_text() const;
    const std::string& source_text() const;
    const std::string& link_note_text() const;
};

const std::vector<Hardware>& hardware_presets();
// The presets' names, in the file's order, joined by ", ".
std::string hardware_names();
// By name, in any letter case; nullptr when no preset has that name.
const Hardware* lookup_hardware(const std::string& name);
// By name, in any letter case; InputError naming `where` and the known names when absent. The
// rule names no CLI flag: an app that has a flag listing the presets adds that hint itself.
const Hardware& find_hardware(const std::string& where, const std::string& name);

}  // namespace inferlab
