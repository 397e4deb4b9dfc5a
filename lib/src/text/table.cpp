#include "inferlab/text/table.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab {

namespace {

// One code point of UTF-8 text at `i`: its value and its length in bytes (a malformed byte counts
// as one code point of its own, so no input stops the decoding).
char32_t decode_at(const std::string& s, std::size_t i, std::size_t* len) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    char32_t cp = n == 4 ? (c & 0x07u) : n == 3 ? (c & 0x0Fu) : n == 2 ? (c & 0x1Fu) : c;
    for (std::size_t k = 1; k < n; ++k) {
        if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
            n = 1;
            cp = c;
            break;
        }
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    }
    *len = n;
    return cp;
}

// East Asian Wide (W) and Fullwidth (F) code points take two terminal columns: Hangul Jamo, CJK
// radicals to Yi (punctuation 、。「」 included), Hangul syllables, CJK compatibility ideographs,
// vertical and small forms, fullwidth forms (，：（）), and the supplementary ideographic planes.
bool is_wide(char32_t cp) {
    return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) || (cp >= 0x3041 && cp <= 0xA4CF) ||
           (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
           (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

// Punctuation that must not begin a line (，。、：；）」』！？) or end one (（「『).
bool no_break_before(char32_t cp) {
    return cp == 0xFF0C || cp == 0x3002 || cp == 0x3001 || cp == 0xFF1A || cp == 0xFF1B || cp == 0xFF09 ||
           cp == 0x300D || cp == 0x300F || cp == 0xFF01 || cp == 0xFF1F;
}
bool no_break_after(char32_t cp) { return cp == 0xFF08 || cp == 0x300C || cp == 0x300E; }

}  // namespace

std::size_t display_width(const std::string& s) {
    std::size_t n = 0;
    for (std::size_t i = 0, len = 0; i < s.size(); i += len) n += is_wide(decode_at(s, i, &len)) ? 2 : 1;
    return n;
}

namespace {

// A piece of text that is never split, and whether it joins the previous piece without a space
// (Chinese text breaks between any two characters, not only at spaces).
struct Piece {
    std::string text;
    bool glued = false;
};

std::vector<Piece> pieces_of(const std::string& text) {
    std::vector<Piece> out;
    bool after_space = true;
    char32_t prev = 0;
    for (std::size_t i = 0, len = 0; i < text.size(); i += len) {
        const char32_t cp = decode_at(text, i, &len);
        if (cp == U' ') {
            after_space = true;
            continue;
        }
        // A break is allowed at a space, and beside a wide character unless punctuation forbids it.
        const bool breakable = after_space || ((is_wide(cp) || is_wide(prev)) && !no_break_before(cp) &&
                                               !no_break_after(prev));
        if (out.empty() || breakable) out.push_back({"", !after_space});
        out.back().text += text.substr(i, len);
        after_space = false;
        prev = cp;
    }
    return out;
}

// Splits `text` into lines of at most `width` columns, at spaces and between CJK characters (a
// piece longer than that keeps its own line).
std::vector<std::string> wrap_words(const std::string& text, std::size_t width, std::size_t rest_width = 0) {
    std::vector<std::string> lines;
    std::string line;
    for (const Piece& p : pieces_of(text)) {
        // The first line has `width` columns, the lines after it `rest_width` (0: the same).
        const std::size_t room = lines.empty() || rest_width == 0 ? width : rest_width;
        const std::string sep = line.empty() || p.glued ? "" : " ";
        if (!line.empty() && display_width(line) + sep.size() + display_width(p.text) > room) {
            lines.push_back(line);
            line = p.text;
            continue;
        }
        line += sep + p.text;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

struct Layout {
    std::vector<std::size_t> width;            // per column
    std::vector<std::vector<std::string>> head;  // per column: the header's lines
};

// Column widths from the cells, with headers wrapped onto lines no wider than `head_cap`
// (0: headers on one line).
Layout layout(const Table& t, std::size_t head_cap) {
    const std::size_t ncol = t.columns.size();
    Layout l{std::vector<std::size_t>(ncol, 0), std::vector<std::vector<std::string>>(ncol)};
    for (const auto& row : t.rows)
        for (std::size_t c = 0; c < ncol && c < row.size(); ++c) l.width[c] = std::max(l.width[c], display_width(row[c]));
    for (std::size_t c = 0; c < ncol; ++c) {
        const std::size_t cap = head_cap == 0 ? display_width(t.columns[c]) : std::max(l.width[c], head_cap);
        l.head[c] = wrap_words(t.columns[c], std::max<std::size_t>(cap, 1));
        for (const auto& h : l.head[c]) l.width[c] = std::max(l.width[c], display_width(h));
    }
    return l;
}

std::size_t total_width(const Layout& l, const std::string& indent) {
    std::size_t w = display_width(indent);
    for (std::size_t c = 0; c < l.width.size(); ++c) w += l.width[c] + (c ? 2 : 0);
    return w;
}

std::string render_grid(const Table& t, const Layout& l, const std::string& indent) {
    const std::size_t ncol = t.columns.size();
    auto right = [&](std::size_t c) { return c < t.right_align.size() ? t.right_align[c] : c != 0; };
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out = indent;
        for (std::size_t c = 0; c < ncol; ++c) {
            std::string cell = c < cells.size() ? cells[c] : "";
            std::string pad(l.width[c] - std::min(l.width[c], display_width(cell)), ' ');
            out += right(c) ? pad + cell : cell + (c + 1 < ncol ? pad : "");
            if (c + 1 < ncol) out += "  ";
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
    };
    std::string out;
    std::size_t head_lines = 0;
    for (const auto& h : l.head) head_lines = std::max(head_lines, h.size());
    for (std::size_t k = 0; k < head_lines; ++k) {
        // Wrapped headers sit on their last lines, so the bottom line touches the rule.
        std::vector<std::string> cells(ncol);
        for (std::size_t c = 0; c < ncol; ++c) {
            const std::size_t skip = head_lines - l.head[c].size();
            if (k >= skip) cells[c] = l.head[c][k - skip];
        }
        out += line(cells);
    }
    std::vector<std::string> rule;
    for (std::size_t c = 0; c < ncol; ++c) {
        std::string r;
        for (std::size_t k = 0; k < l.width[c]; ++k) r += "─";
        rule.push_back(r);
    }
    out += line(rule);
    for (const auto& row : t.rows) out += line(row);
    return out;
}

// One block per row, "column: value" per line: a table too wide for the terminal stays readable.
std::string render_records(const Table& t, const std::string& indent, std::size_t max_width) {
    std::string out;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        if (r) out += "\n";
        for (std::size_t c = 0; c < t.columns.size(); ++c) {
            const std::string lead = indent + (c == 0 ? "" : "  ") + t.columns[c] + ":";
            const std::string cell = c < row.size() ? row[c] : "";
            if (display_width(lead) + 1 + display_width(cell) <= max_width) {
                out += lead + " " + cell + "\n";
                continue;
            }
            // A long name and value: the value goes under the name, indented, wrapped if it must.
            const std::string under = indent + std::string(c == 0 ? 2 : 4, ' ');
            out += lead + "\n";
            const std::size_t room = max_width > display_width(under) + 10 ? max_width - display_width(under) : 10;
            for (const auto& l : wrap_words(cell, room)) out += under + l + "\n";
        }
    }
    return out;
}

}  // namespace

std::string render_text(const Table& t, const std::string& indent, std::size_t max_width) {
    const Layout natural = layout(t, 0);
    if (max_width == 0 || total_width(natural, indent) <= max_width) return render_grid(t, natural, indent);
    // Too wide: headers wrap onto up to a few lines (a column is never narrower than its cells);
    // when even that does not fit, each row becomes a block of "column: value" lines.
    for (std::size_t cap : {16, 12, 8}) {
        const Layout narrow = layout(t, cap);
        std::size_t lines = 0;
        for (const auto& h : narrow.head) lines = std::max(lines, h.size());
        if (lines <= 4 && total_width(narrow, indent) <= max_width) return render_grid(t, narrow, indent);
    }
    return render_records(t, indent, max_width);
}

std::string wrap_text(const std::string& text, std::size_t width, const std::string& indent, const std::string& hanging) {
    std::string out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        const std::string para = text.substr(start, nl - start);
        if (para.empty()) {
            if (nl < text.size()) out += "\n";
        } else {
            // Continuation lines take `hanging`, so their room is the width less that prefix.
            const auto room = [&](const std::string& prefix) {
                return width > display_width(prefix) + 20 ? width - display_width(prefix) : std::size_t{20};
            };
            const auto lines = wrap_words(para, room(indent), room(hanging));
            for (std::size_t k = 0; k < lines.size(); ++k) out += (k == 0 ? indent : hanging) + lines[k] + "\n";
        }
        start = nl + 1;
    }
    return out;
}

std::string render_csv(const Table& t) {
    auto cell = [](const std::string& s) {
        if (s.find_first_of(",\"\n") == std::string::npos) return s;
        std::string q(1, '"');
        for (char c : s) {
            q.push_back(c);
            if (c == '"') q.push_back('"');
        }
        q.push_back('"');
        return q;
    };
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            if (c) out.push_back(',');
            out.append(cell(cells[c]));
        }
        out.push_back('\n');
        return out;
    };
    std::string out = line(t.columns);
    for (const auto& r : t.rows) out += line(r);
    return out;
}

std::string render_bar_chart(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                             int width) {
    static const char* marks[] = {"#", "=", "+", "*", "~"};
    double max = 0;
    std::size_t label_w = 0;
    for (const auto& l : labels) label_w = std::max(label_w, display_width(l));
    for (const auto& s : series)
        for (double v : s.values) {
            if (!std::isfinite(v) || v < 0) throw std::logic_error("chart value must be finite and non-negative");
            max = std::max(max, v);
        }
    std::string out;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        for (std::size_t k = 0; k < series.size(); ++k) {
            std::string lab = k == 0 ? labels[i] : "";
            std::string line(label_w - display_width(lab), ' ');
            line.append(lab);
            line.append(" |");
            double v = series[k].values[i];
            int n = max > 0 ? static_cast<int>(std::lround(v / max * width)) : 0;
            for (int c = 0; c < n; ++c) line += marks[k % 5];
            line.push_back(' ');
            line.append(format_real(v, 4));
            line.push_back('\n');
            out.append(line);
        }
    }
    out.append(label_w + 1, ' ');
    out.append(tr(N_("legend:")));
    for (std::size_t k = 0; k < series.size(); ++k) {
        out.append("  ");
        out.append(marks[k % 5]);
        out.append(" ");
        out.append(series[k].name);
    }
    out.append("\n");
    return out;
}


void require_finite(const nlohmann::json& j, const std::string& path) {
    if (j.is_number_float()) {
        if (!std::isfinite(j.get<double>())) throw std::logic_error("non-finite number at " + path);
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) require_finite(it.value(), path + "." + it.key());
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) require_finite(j[i], path + "[" + std::to_string(i) + "]");
    }
}

std::string csv_column_name(const std::string& key) {
    if (!key.empty() && key.front() == '#') return key.size() > 1 ? key.substr(1) : "index";
    std::string name = !key.empty() && key.front() == '/' ? key.substr(1) : key;
    for (char& c : name)
        if (c == '/') c = '.';
    return name;
}

// Column's key rule: "#" the row's position, "/..." a pointer from the root, else a pointer into
// the row (a plain member, or "report/mse") or into the object that holds the rows.
void check_column_keys(const nlohmann::json& doc, const std::string& rows, const std::vector<std::string>& keys) {
    using Pointer = nlohmann::json::json_pointer;
    auto fail = [](const std::string& why) { throw std::logic_error(why); };
    const Pointer at(rows);
    if (!doc.contains(at)) fail("no JSON at '" + rows + "'");
    const nlohmann::json& held = doc.at(at);
    if (held.is_array() && held.empty()) return;
    const nlohmann::json& row = held.is_array() ? held.front() : held;
    const nlohmann::json* parent = at.empty() ? nullptr : &doc.at(at.parent_pointer());
    for (const auto& key : keys) {
        if (key.empty()) fail("a column has no key");
        if (key.front() == '#') continue;
        if (key.front() == '/') {
            if (!doc.contains(Pointer(key))) fail("column key '" + key + "' is not in the JSON document");
            continue;
        }
        const Pointer in_row("/" + key);
        const bool found = (row.is_object() && row.contains(in_row)) || (parent && parent->is_object() && parent->contains(in_row));
        if (!found) fail("column key '" + key + "' is not in its JSON row at '" + rows + "'");
    }
}

namespace {

// The JSON figure of `key` in row `i` of `held` (the rows at `at`), or nullptr.
const nlohmann::json* figure_at(const nlohmann::json& doc, const nlohmann::json::json_pointer& at,
                                const nlohmann::json& held, std::size_t i, const std::string& key) {
    using Pointer = nlohmann::json::json_pointer;
    auto pick = [i](const nlohmann::json& v) { return v.is_array() ? &v.at(i) : &v; };
    if (key.front() == '/') {
        const nlohmann::json& v = doc.at(Pointer(key));
        return v.is_array() && v.size() == (held.is_array() ? held.size() : v.size()) ? pick(v) : &v;
    }
    const Pointer in_row("/" + key);
    const nlohmann::json& row = held.is_array() ? held.at(i) : held;
    if (row.is_object() && row.contains(in_row)) return held.is_array() ? &row.at(in_row) : pick(row.at(in_row));
    const nlohmann::json& parent = doc.at(at.parent_pointer());
    return parent.is_object() && parent.contains(in_row) ? &parent.at(in_row) : nullptr;
}

bool same_number(const std::string& cell, const nlohmann::json& v) {
    if (cell.empty()) return false;
    if (v.is_number_integer() || v.is_number_unsigned()) {
        const std::string exact = v.dump();
        return cell == exact;
    }
    char* end = nullptr;
    const double d = std::strtod(cell.c_str(), &end);
    return end == cell.c_str() + cell.size() && d == v.get<double>();
}

}  // namespace

void check_csv_cells(const nlohmann::json& doc, const std::string& rows, const Table& csv) {
    using Pointer = nlohmann::json::json_pointer;
    const Pointer at(rows);
    if (csv.keys.empty() || !doc.contains(at)) return;
    const nlohmann::json& held = doc.at(at);
    const std::size_t n = csv.rows.size();
    if (held.is_array() ? held.size() != n : !held.is_object()) return;
    if (held.is_object() && n > 1) {  // an object of columns: its arrays as long as the table
        bool columns = false;
        for (const auto& key : csv.keys) {
            if (key.front() == '#' || key.front() == '/' || !held.contains(key) || !held.at(key).is_array()) continue;
            if (held.at(key).size() != n) return;
            columns = true;
        }
        if (!columns) return;
    }
    std::string wrong;  // the first wrong cell of each column
    for (std::size_t c = 0; c < csv.keys.size(); ++c)
        for (std::size_t i = 0; i < n; ++i) {
            const std::string& key = csv.keys[c];
            if (key.front() == '#') continue;
            const nlohmann::json* v = figure_at(doc, at, held, i, key);
            if (v == nullptr) continue;
            const std::string& cell = csv.rows[i][c];
            const bool ok = v->is_number()    ? same_number(cell, *v)
                            : v->is_null()    ? cell.empty()
                            : v->is_boolean() ? cell == (v->get<bool>() ? "true" : "false")
                                              : true;
            if (!ok) {
                wrong += (wrong.empty() ? "" : "; ") + ("column '" + key + "' row " + std::to_string(i) + " holds '" + cell +
                                                       "' where the JSON holds " + v->dump());
                break;
            }
        }
    if (!wrong.empty()) throw std::logic_error("--csv against the JSON at '" + rows + "': " + wrong);
}

}  // namespace inferlab
