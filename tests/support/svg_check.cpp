#include "svg_check.hpp"

#include <catch2/catch.hpp>

#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace inferlab::test {

Scratch::Scratch(const std::string& name)
    : path(std::filesystem::temp_directory_path() / ("inferlab-test-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
}

Scratch::~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + p.string());
    return {std::istreambuf_iterator<char>(f), {}};
}

namespace {

void collect_text(const pugi::xml_node& n, std::string& out) {
    // A line the writer wrapped (class "input-continued", "subtitle-continued") goes on its line.
    const std::string cls = n.attribute("class").value();
    if (cls.size() > 10 && cls.compare(cls.size() - 10, 10, "-continued") == 0 && !out.empty() && out.back() == '\n')
        out.pop_back();
    for (const pugi::xml_node& c : n.children()) {
        if (c.type() == pugi::node_pcdata) out += std::string(c.value()) + "\n";
        collect_text(c, out);
    }
}

std::uint32_t be32(const unsigned char* p) {
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

}  // namespace

std::string svg_parse_error(const std::string& svg) {
    pugi::xml_document doc;
    const pugi::xml_parse_result r = doc.load_string(svg.c_str());
    if (r) return "";
    return std::string(r.description()) + " at offset " + std::to_string(r.offset);
}

std::vector<SvgItem> svg_items(const std::string& svg, const std::string& cls) {
    pugi::xml_document doc;
    doc.load_string(svg.c_str());
    std::vector<SvgItem> out;
    for (const pugi::xpath_node& x : doc.select_nodes(("//*[@class='" + cls + "']").c_str())) {
        const pugi::xml_node n = x.node();
        SvgItem it{n.name(), n.child_value(), 0, false};
        if (const pugi::xml_attribute a = n.attribute("data-value")) {
            it.value = a.as_double();
            it.has_value = true;
        }
        out.push_back(it);
    }
    return out;
}

std::vector<double> svg_values(const std::string& svg, const std::string& cls) {
    std::vector<double> out;
    for (const auto& item : svg_items(svg, cls)) {
        if (!item.has_value) throw std::runtime_error("an element of class '" + cls + "' has no data-value");
        out.push_back(item.value);
    }
    return out;
}

std::string svg_title(const std::string& svg) {
    pugi::xml_document doc;
    doc.load_string(svg.c_str());
    return doc.child("svg").child_value("title");
}

std::string svg_all_text(const std::string& svg) {
    pugi::xml_document doc;
    doc.load_string(svg.c_str());
    std::string out;
    collect_text(doc, out);
    return out;
}

bool have_rsvg_convert() { return std::system("command -v rsvg-convert >/dev/null 2>&1") == 0; }

int render_png(const std::string& svg_path, const std::string& png_path, std::string& err) {
    const std::string err_path = png_path + ".stderr";
    const std::string cmd = "rsvg-convert -o '" + png_path + "' '" + svg_path + "' 2>'" + err_path + "'";
    const int status = std::system(cmd.c_str());
    std::ifstream e(err_path);
    err.assign(std::istreambuf_iterator<char>(e), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

PngStats png_stats(const std::string& png_path) {
    PngStats s;
    std::ifstream f(png_path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), {});
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    if (bytes.size() < 8 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
        s.error = "not a PNG";
        return s;
    }
    std::string idat;
    int depth = 0, color = 0, interlace = 0;
    for (std::size_t at = 8; at + 8 <= bytes.size();) {
        const std::uint32_t len = be32(p + at);
        const std::string type = bytes.substr(at + 4, 4);
        if (at + 12 + len > bytes.size()) {
            s.error = "truncated chunk " + type;
            return s;
        }
        const unsigned char* d = p + at + 8;
        if (type == "IHDR") {
            s.width = be32(d), s.height = be32(d + 4), depth = d[8], color = d[9], interlace = d[12];
        } else if (type == "IDAT") {
            idat.append(reinterpret_cast<const char*>(d), len);
        }
        at += 12 + len;
    }
    if (depth != 8 || (color != 2 && color != 6) || interlace != 0) {
        s.error = "only 8-bit RGB/RGBA, not interlaced, is decoded here";
        return s;
    }
    const std::size_t bpp = color == 6 ? 4 : 3, stride = s.width * bpp;
    std::vector<unsigned char> raw((stride + 1) * s.height);
    uLongf raw_len = raw.size();
    if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
        raw_len != raw.size()) {
        s.error = "IDAT does not inflate to the image size";
        return s;
    }
    // Undo the per-row filters (PNG specification §9).
    std::vector<unsigned char> prev(stride, 0), row(stride);
    for (std::uint32_t y = 0; y < s.height; ++y) {
        const unsigned char* in = raw.data() + y * (stride + 1);
        const int filter = in[0];
        for (std::size_t i = 0; i < stride; ++i) {
            const int a = i >= bpp ? row[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
            int pred = 0;
            switch (filter) {
            case 1: pred = a; break;
            case 2: pred = b; break;
            case 3: pred = (a + b) / 2; break;
            case 4: {
                const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
                pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
                break;
            }
            default: break;
            }
            row[i] = static_cast<unsigned char>(in[1 + i] + pred);
        }
        for (std::uint32_t x = 0; x < s.width; ++x) {
            const unsigned char* px = row.data() + x * bpp;
            const bool transparent = bpp == 4 && px[3] == 0;
            const bool white = px[0] > 250 && px[1] > 250 && px[2] > 250;
            ++s.pixels;
            if (!transparent && !white) ++s.ink;
        }
        prev = row;
    }
    return s;
}

void check_renders(const std::filesystem::path& svg, std::uint32_t min_width) {
    REQUIRE(have_rsvg_convert());
    const std::filesystem::path png = std::filesystem::path(svg).replace_extension(".png");
    std::string err;
    const int status = render_png(svg.string(), png.string(), err);
    INFO(svg.string() << "\nrsvg-convert stderr: " << err);
    REQUIRE(status == 0);
    CHECK(err.empty());
    const PngStats st = png_stats(png.string());
    REQUIRE(st.error.empty());
    CHECK(st.width >= min_width);
    CHECK(st.ink * 100 > st.pixels);
}

}  // namespace inferlab::test
