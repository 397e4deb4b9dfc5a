#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "inferlab/base/format.hpp"
#include "inferlab/text/table.hpp"

using namespace inferlab;

TEST_CASE("text tables align by display width", "[table]") {
    Table t{{"name", "value"}, {{"a", "1"}, {"×long", "12345"}}, {}};
    std::string s = render_text(t);
    CHECK(s == "name   value\n─────  ─────\na          1\n×long  12345\n");
    CHECK(display_width("中文") == 4);
    CHECK(display_width("≈1") == 2);
}

TEST_CASE("CSV quotes what needs quoting", "[table]") {
    Table t{{"a", "b"}, {{"1,2", "say \"hi\""}}, {}};
    CHECK(render_csv(t) == "a,b\n\"1,2\",\"say \"\"hi\"\"\"\n");
}

TEST_CASE("NaN and infinity never reach JSON output", "[table]") {
    nlohmann::json ok = {{"x", 1.5}, {"list", {1, 2.5}}};
    CHECK_NOTHROW(require_finite(ok));
    nlohmann::json bad = {{"rows", {{{"v", std::numeric_limits<double>::quiet_NaN()}}}}};
    CHECK_THROWS_WITH(require_finite(bad), Catch::Contains("$.rows[0].v"));
    nlohmann::json inf = {{"v", std::numeric_limits<double>::infinity()}};
    CHECK_THROWS_AS(require_finite(inf), std::logic_error);
}

TEST_CASE("bar charts scale to the largest value", "[table]") {
    std::string s = render_bar_chart({"1", "8"}, {{"agg", {1, 2}}}, 10);
    CHECK(s.find("1 |##### 1\n") != std::string::npos);
    CHECK(s.find("8 |########## 2\n") != std::string::npos);
    CHECK(s.find("legend:  # agg") != std::string::npos);
}

TEST_CASE("short numbers print as typed, long ones at six digits", "[table][edge]") {
    CHECK(format_short(0.1 + 0.2) == "0.3");  // 0.30000000000000004: 17 digits, so 6
    CHECK(format_short(0.3) == "0.3");
    CHECK(format_short(0.7599) == "0.7599");
    CHECK(format_short(1e-16) == "1e-16");
    CHECK(format_short(1.0000000000000001e-16) == "1e-16");
    CHECK(format_short(1.0 / 3) == "0.333333");
    CHECK(format_short(100) == "100");
    CHECK(format_short(0) == "0");
    CHECK(format_short(-0.25) == "-0.25");
    CHECK(format_short(std::numeric_limits<double>::quiet_NaN()) == "n/a");
}

namespace {
std::size_t widest(const std::string& text) {
    std::size_t w = 0, start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        w = std::max(w, inferlab::display_width(text.substr(start, nl - start)));
        start = nl + 1;
    }
    return w;
}
}  // namespace

TEST_CASE("render_text fits a width: headers wrap first, then rows become blocks", "[table]") {
    using inferlab::Table;
    Table t{{"batch", "bytes read per decode step", "aggregate tokens per second"}, {{"1", "15,074,000,000", "222.9"}, {"8", "22,590,000,000", "1,190.1"}}, {}};
    const std::string natural = inferlab::render_text(t, "  ");
    CHECK(widest(natural) == 2 + 5 + 2 + 26 + 2 + 27);
    // Unlimited by default; at 50 columns the long headers go onto several lines, cells intact.
    const std::string narrow = inferlab::render_text(t, "  ", 50);
    CHECK(widest(narrow) <= 50);
    CHECK(narrow.find("15,074,000,000") != std::string::npos);
    CHECK(narrow.find("aggregate tokens") != std::string::npos);
    CHECK(narrow.find("aggregate tokens per second") == std::string::npos);
    // At 30 columns no grid fits (three columns of 5 + 14 + 7 cells plus gaps and wrapped
    // headers of at least 8): each row is a block of "column: value" lines.
    const std::string blocks = inferlab::render_text(t, "", 30);
    CHECK(widest(blocks) <= 30);
    // A name and value longer than the width put the value on the next line.
    CHECK(blocks == "batch: 1\n  bytes read per decode step:\n    15,074,000,000\n  aggregate tokens per second:\n    222.9\n\n"
                    "batch: 8\n  bytes read per decode step:\n    22,590,000,000\n  aggregate tokens per second:\n    1,190.1\n");
    CHECK(inferlab::render_text(t, "", 40).find("─") != std::string::npos);  // at 40 a grid still fits
}

TEST_CASE("wrap_text breaks at spaces, keeps empty lines and indents continuation lines", "[table]") {
    CHECK(inferlab::wrap_text("one two three four", 40) == "one two three four\n");
    CHECK(inferlab::wrap_text("aaaa bbbb cccc dddd eeee ffff", 31, "  ", "    ") == "  aaaa bbbb cccc dddd eeee ffff\n");
    CHECK(inferlab::wrap_text("aaaa bbbb cccc dddd eeee ffff", 30, "  ", "    ") == "  aaaa bbbb cccc dddd eeee\n    ffff\n");
    const std::string long_text(10, 'x');
    std::string para;
    for (int i = 0; i < 8; ++i) para += (i ? " " : "") + long_text;
    const std::string w = inferlab::wrap_text(para + "\n\nnext", 40, "", "  ");
    CHECK(w == "xxxxxxxxxx xxxxxxxxxx xxxxxxxxxx\n  xxxxxxxxxx xxxxxxxxxx xxxxxxxxxx\n  xxxxxxxxxx xxxxxxxxxx\n\nnext\n");
}

// Column's key rule (check_column_keys): what each key form accepts, and that a key naming no
// figure is still an internal error (std::logic_error) in every form.
TEST_CASE("column keys: a member of the row, '#' for the position, '/pointer' from the root", "[table]") {
    const nlohmann::json doc = {{"per_layer", {10, 20}},
                                {"model", {{"runs", {{{"h_kv", 8}, {"report", {{"mse", 0.5}}}}}}, {"layers", 2}}},
                                {"p", {0.5, 0.5}},
                                {"sim", {{"speculative", {0.4, 0.6}}}}};
    const std::string rows = "/model/runs";
    CHECK_NOTHROW(check_column_keys(doc, rows, {"#", "h_kv", "layers", "report/mse", "/per_layer", "/p"}));
    CHECK_NOTHROW(check_column_keys(doc, "/sim", {"#", "speculative", "/p"}));  // columns as arrays
    CHECK_NOTHROW(check_column_keys(doc, "", {"p", "per_layer"}));              // the document's own arrays
    CHECK_THROWS_AS(check_column_keys(doc, rows, {"#", "d_k"}), std::logic_error);
    CHECK_THROWS_WITH(check_column_keys(doc, rows, {"h_kv", "d_k"}),
                      "column key 'd_k' is not in its JSON row at '/model/runs'");
    CHECK_THROWS_WITH(check_column_keys(doc, rows, {"report/snr_db"}),
                      "column key 'report/snr_db' is not in its JSON row at '/model/runs'");
    // An absolute pointer must exist: a figure missing from the root, or one only in a row, fails.
    CHECK_THROWS_WITH(check_column_keys(doc, rows, {"/bytes_per_token_per_layer"}),
                      "column key '/bytes_per_token_per_layer' is not in the JSON document");
    CHECK_THROWS_AS(check_column_keys(doc, rows, {"/h_kv"}), std::logic_error);
    CHECK_THROWS_AS(check_column_keys(doc, rows, {"p"}), std::logic_error);  // the root's p is "/p" there
    CHECK_THROWS_AS(check_column_keys(doc, rows, {""}), std::logic_error);
    CHECK_THROWS_WITH(check_column_keys(doc, "/no/rows", {"#"}), "no JSON at '/no/rows'");
    // No rows: nothing to check.
    CHECK_NOTHROW(check_column_keys({{"rows", nlohmann::json::array()}}, "/rows", {"anything", "/missing"}));
}

TEST_CASE("a csv_only column is in the CSV's table and not in the text's", "[table]") {
    struct R {
        int held, checked;
    };
    const std::vector<Column<R>> columns = {
        {"held", "held", [](const R& r) { return std::to_string(r.held); },
         [](const R& r) { return std::to_string(r.held) + "/" + std::to_string(r.checked) + " ok"; }},
        {"checked", "checked", [](const R& r) { return std::to_string(r.checked); }, {}, std::nullopt, true}};
    const std::vector<R> rows = {{9, 10}};
    const Table csv = columns_table(columns, rows), text = columns_table(columns, rows, CellForm::text);
    CHECK(render_csv(csv) == "held,checked\n9,10\n");
    CHECK(text.columns == std::vector<std::string>{"held"});
    CHECK(text.keys == std::vector<std::string>{"held"});
    CHECK(text.rows == std::vector<std::vector<std::string>>{{"9/10 ok"}});
}

// Issue #29, one CSV convention: each column headed by its JSON key, its cells the JSON's figures
// to the last digit; a rounded cell, a word for a boolean or a number for null is an internal error.
TEST_CASE("csv_column_name and check_csv_cells: the JSON's names and figures", "[table]") {
    CHECK(csv_column_name("bytes_per_step_gb") == "bytes_per_step_gb");
    CHECK(csv_column_name("report/mse") == "report.mse");
    CHECK(csv_column_name("/bytes_per_token_per_layer") == "bytes_per_token_per_layer");
    CHECK(csv_column_name("interval_99/1") == "interval_99.1");
    CHECK(csv_column_name("#layer") == "layer");
    CHECK(csv_column_name("#") == "index");
    const nlohmann::json doc = {{"rows", {{{"batch", 1}, {"gb", 17.13426432}, {"fits", true}, {"bound", nullptr}},
                                          {{"batch", 8}, {"gb", 24.650457088}, {"fits", false}, {"bound", "memory"}}}}};
    Table t;
    t.keys = {"#", "batch", "gb", "fits", "bound"};
    t.rows = {{"0", "1", "17.13426432", "true", ""}, {"1", "8", "24.650457088", "false", "memory"}};
    CHECK_NOTHROW(check_csv_cells(doc, "/rows", t));
    Table rounded = t;
    rounded.rows[1][2] = "24.650";
    CHECK_THROWS_WITH(check_csv_cells(doc, "/rows", rounded),
                      Catch::Contains("column 'gb' row 1 holds '24.650' where the JSON holds 24.650457088"));
    Table word = t;
    word.rows[0][3] = "yes";
    CHECK_THROWS_AS(check_csv_cells(doc, "/rows", word), std::logic_error);
    Table null_filled = t;
    null_filled.rows[0][4] = "0";
    CHECK_THROWS_AS(check_csv_cells(doc, "/rows", null_filled), std::logic_error);
    Table other_shape = rounded;  // a table of another shape than its JSON rows is not compared
    other_shape.rows.push_back(other_shape.rows.back());
    CHECK_NOTHROW(check_csv_cells(doc, "/rows", other_shape));
}
