#pragma once
// Reading the SVG inferlab writes back, for tests: parsed by a real XML parser (pugixml), the
// elements of one class with their text and data-value, and a PNG rendered by rsvg-convert
// decoded far enough to count the pixels that are not background.
#include <pugixml.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace inferlab::test {

// A fresh folder per test case under the system's temporary directory, removed at the end; the
// process id keeps two builds' test runs at the same time apart.
struct Scratch {
    std::filesystem::path path;
    explicit Scratch(const std::string& name);
    ~Scratch();
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

// The whole file; a file that cannot be read throws (the test case fails with its path).
std::string slurp(const std::filesystem::path& p);

// An element of the figure: its tag, text content and data-value (NaN when absent).
struct SvgItem {
    std::string tag, text;
    double value = 0;
    bool has_value = false;
};

// Parses `svg`; an empty string when well-formed, else pugixml's description and offset.
std::string svg_parse_error(const std::string& svg);
// Every element whose class attribute is `cls`, in document order.
std::vector<SvgItem> svg_items(const std::string& svg, const std::string& cls);
// The data-value of every element of class `cls`, in document order; one without a data-value
// throws (the test fails naming the class): the numbers a figure draws are the result's.
std::vector<double> svg_values(const std::string& svg, const std::string& cls);
// The text of the root's <title>.
std::string svg_title(const std::string& svg);
// Every text node of the document, joined by newlines (what a search would find); a line the
// writer wrapped onto more (class "…-continued") reads as the one line it is.
std::string svg_all_text(const std::string& svg);

// rsvg-convert on PATH.
bool have_rsvg_convert();
// Renders `svg_path` to `png_path` with rsvg-convert; returns its exit status and fills `err`.
int render_png(const std::string& svg_path, const std::string& png_path, std::string& err);

struct PngStats {
    std::uint32_t width = 0, height = 0;
    std::uint64_t pixels = 0, ink = 0;  // ink: pixels neither white nor transparent
    std::string error;                  // empty when decoded
};
// Decodes an 8-bit RGB or RGBA PNG (rsvg-convert's output) with zlib and counts the ink.
PngStats png_stats(const std::string& png_path);

// The figure at `svg` renders: rsvg-convert (which scripts/install-deps.sh installs: a missing one
// fails the test, never skips it) writes a PNG beside it without a word on stderr, the PNG decodes,
// is at least `min_width` pixels wide, and is not blank (text, lines and frames cover well over 1%).
void check_renders(const std::filesystem::path& svg, std::uint32_t min_width = 600);

}  // namespace inferlab::test
