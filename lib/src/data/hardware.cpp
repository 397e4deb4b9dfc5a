#include "inferlab/data/hardware.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "shipped_hardware.hpp"

namespace inferlab {
namespace {

std::vector<Hardware> load() {
    std::vector<Hardware> out;
    auto j = nlohmann::json::parse(detail::kShippedHardware[0].json);
    for (const auto& d : j.at("devices")) {
        Hardware h;
        h.name = d.at("name").get<std::string>();
        const std::string where = "hardware preset '" + h.name + "'";
        h.kind = d.value("kind", "");
        h.bandwidth_text = d.at("memory_bandwidth").get<std::string>();
        h.bandwidth = parse_rate(where + " memory_bandwidth", h.bandwidth_text);
        h.notes = d.value("bandwidth_note", "");
        if (d.contains("bf16_dense_flops")) {
            h.flops_text = d["bf16_dense_flops"].get<std::string>();
            h.peak_flops = parse_flops(where + " bf16_dense_flops", h.flops_text);
            h.notes += "; " + d.value("flops_note", "");
        }
        if (d.contains("memory")) {
            h.memory_text = d["memory"].get<std::string>();
            h.memory_bytes = parse_bytes(where + " memory", h.memory_text);
            h.notes += "; " + d.value("memory_note", "");
        }
        if (d.contains("link_bandwidth")) {
            h.link_bandwidth_text = d["link_bandwidth"].get<std::string>();
            h.link_bandwidth = parse_rate(where + " link_bandwidth", h.link_bandwidth_text);
            h.link_latency_s = parse_seconds(where + " link_latency", d.at("link_latency").get<std::string>());
            h.link_note = d.at("link_note").get<std::string>();
            h.link_note_zh = d.at("link_note_zh").get<std::string>();
        }
        h.source = d.at("source").get<std::string>();
        h.notes_zh = d.at("notes_zh").get<std::string>();
        h.source_zh = d.at("source_zh").get<std::string>();
        out.push_back(h);
    }
    return out;
}

}  // namespace

const std::vector<Hardware>& hardware_presets() {
    static const std::vector<Hardware> all = load();
    return all;
}

const std::string& Hardware::notes_text() const { return language() == Lang::zh ? notes_zh : notes; }
const std::string& Hardware::source_text() const { return language() == Lang::zh ? source_zh : source; }
const std::string& Hardware::link_note_text() const { return language() == Lang::zh ? link_note_zh : link_note; }

std::string hardware_names() {
    std::string names;
    for (const auto& h : hardware_presets()) names += (names.empty() ? "" : ", ") + h.name;
    return names;
}

const Hardware* lookup_hardware(const std::string& name) {
    // Preset names are lowercase; "H100-SXM" as a datasheet writes it names the same preset
    // (a name is not a unit: no decimal/binary ambiguity hides in its case).
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& h : hardware_presets())
        if (h.name == lower) return &h;
    return nullptr;
}

const Hardware& find_hardware(const std::string& where, const std::string& name) {
    if (const Hardware* h = lookup_hardware(name)) return *h;
    throw InputError(where, name, N_("is not a known hardware preset (known: {0})"), {hardware_names()});
}

}  // namespace inferlab
