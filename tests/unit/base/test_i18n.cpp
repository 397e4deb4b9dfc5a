// The message catalogue reader (GNU .mo), the choice of language, and placeholder substitution.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"

using namespace inferlab;

namespace {

// A .mo file written here, independently of msgfmt: header (magic, revision 0, N, originals'
// table offset, translations' table offset, hash size 0, hash offset), the two tables of
// (length, offset), then the NUL-terminated strings. `big_endian` writes every word swapped.
std::string make_mo(const std::map<std::string, std::string>& entries, bool big_endian) {
    std::string out;
    auto word = [&](std::uint32_t v) {
        for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (big_endian ? 24 - 8 * k : 8 * k)) & 0xff);
    };
    const auto n = static_cast<std::uint32_t>(entries.size());
    const std::uint32_t originals = 28, translations = originals + 8 * n, strings = translations + 8 * n;
    std::string blob;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ids, strs;
    for (const auto& [id, str] : entries) {
        ids.push_back({static_cast<std::uint32_t>(id.size()), strings + static_cast<std::uint32_t>(blob.size())});
        blob += id + '\0';
    }
    for (const auto& [id, str] : entries) {
        strs.push_back({static_cast<std::uint32_t>(str.size()), strings + static_cast<std::uint32_t>(blob.size())});
        blob += str + '\0';
    }
    for (std::uint32_t v : {0x950412deu, 0u, n, originals, translations, 0u, 0u}) word(v);
    for (const auto& [len, off] : ids) word(len), word(off);
    for (const auto& [len, off] : strs) word(len), word(off);
    return out + blob;
}

const std::map<std::string, std::string> kEntries = {
    {"", "Content-Type: text/plain; charset=UTF-8\n"}, {"passed", "通过"}, {"{0} of {1}", "{1} 中的 {0}"}};

}  // namespace

TEST_CASE("the .mo reader reads both byte orders", "[i18n]") {
    for (bool big : {false, true}) {
        const Catalog c = Catalog::parse(make_mo(kEntries, big));
        REQUIRE(c.find("passed") != nullptr);
        CHECK(*c.find("passed") == "通过");
        CHECK(*c.find("{0} of {1}") == "{1} 中的 {0}");
        CHECK(c.find("failed") == nullptr);
        CHECK(c.entries().size() == 2);  // the header entry is not a message
    }
}

TEST_CASE("a truncated or corrupt catalogue is refused, never read past its end", "[i18n]") {
    const std::string good = make_mo(kEntries, false);
    // Every proper prefix: the header, a table or a string is cut.
    for (std::size_t len = 0; len < good.size(); ++len)
        CHECK_THROWS_AS(Catalog::parse(good.substr(0, len)), CatalogError);
    std::string bad_magic = good;
    bad_magic[0] = 'x';
    CHECK_THROWS_WITH(Catalog::parse(bad_magic), Catch::Contains("magic"));
    // A string offset far past the end (the first original's offset word, at 28 + 4).
    std::string bad_offset = good;
    bad_offset[32 + 3] = '\x7f';
    CHECK_THROWS_AS(Catalog::parse(bad_offset), CatalogError);
    // A count of entries whose tables cannot fit.
    std::string bad_count = good;
    bad_count[8 + 3] = '\x10';
    CHECK_THROWS_WITH(Catalog::parse(bad_count), Catch::Contains("truncated"));
    // A string whose terminating NUL was overwritten.
    std::string no_nul = good;
    no_nul[no_nul.size() - 1] = 'x';
    CHECK_THROWS_AS(Catalog::parse(no_nul), CatalogError);
}

TEST_CASE("the language: --lang, then INFERLAB_LANG, then LC_ALL, LC_MESSAGES, LANG", "[i18n]") {
    std::map<std::string, std::string> env;
    auto getenv = [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    CHECK(choose_language(std::nullopt, getenv) == Lang::en);
    env["LANG"] = "zh_CN.UTF-8";
    CHECK(choose_language(std::nullopt, getenv) == Lang::zh);
    env["LC_MESSAGES"] = "C.UTF-8";  // LC_MESSAGES outranks LANG
    CHECK(choose_language(std::nullopt, getenv) == Lang::en);
    env["LC_ALL"] = "zh_TW";  // LC_ALL outranks both
    CHECK(choose_language(std::nullopt, getenv) == Lang::zh);
    env["LC_ALL"] = "";  // set but empty: not considered (POSIX)
    CHECK(choose_language(std::nullopt, getenv) == Lang::en);
    env["INFERLAB_LANG"] = "zh";
    CHECK(choose_language(std::nullopt, getenv) == Lang::zh);
    CHECK(choose_language(std::string("en"), getenv) == Lang::en);  // --lang outranks everything
    env["INFERLAB_LANG"] = "fr";
    CHECK_THROWS_WITH(choose_language(std::nullopt, getenv), "INFERLAB_LANG 'fr': must be zh or en");
    CHECK_THROWS_WITH(choose_language(std::string("xx"), getenv), "--lang 'xx': must be zh or en");
    CHECK(lang_of_locale("zh") == Lang::zh);
    CHECK(lang_of_locale("zhx") == Lang::en);
    CHECK(lang_of_locale("en_US.UTF-8") == Lang::en);
}

TEST_CASE("the value of --lang is read from argv before parsing, up to the separator", "[i18n]") {
    const char* a[] = {"inferlab", "verify", "--lang", "zh"};
    CHECK(flag_value_of("--lang", 4, a) == std::optional<std::string>("zh"));
    const char* b[] = {"inferlab", "--lang=en", "verify"};
    CHECK(flag_value_of("--lang", 3, b) == std::optional<std::string>("en"));
    const char* c[] = {"inferlab", "verify", "--", "--lang", "zh"};
    CHECK_FALSE(flag_value_of("--lang", 5, c).has_value());
    const char* d[] = {"inferlab", "verify", "--lang"};
    CHECK(flag_value_of("--lang", 3, d) == std::optional<std::string>(""));  // a missing value is then refused
}

TEST_CASE("substitute fills positional placeholders and keeps the rest", "[i18n]") {
    CHECK(substitute("{1} 中的 {0}", {"a", "b"}) == "b 中的 a");
    CHECK(substitute("{0}{0}", {"x"}) == "xx");
    CHECK(substitute("{{0}} {2} {x} {", {"a"}) == "{0} {2} {x} {");
}

TEST_CASE("tr translates through the embedded catalogue only in Chinese", "[i18n]") {
    set_language(Lang::en);
    CHECK(tr("PASS") == "PASS");
    set_language(Lang::zh);
    CHECK(tr("PASS") == "通过");
    CHECK(tr("no such message in the catalogue") == "no such message in the catalogue");
    CHECK(trf("{0} passed, {1} failed", 51, 0) == "51 项通过，0 项失败");
    const InputError e("--layers", "0", N_("must be a positive integer"));
    CHECK(std::string(e.what()) == "--layers '0': must be a positive integer");
    CHECK(e.localized() == "--layers '0': 必须是正整数");
    set_language(Lang::en);
    CHECK(e.localized() == "--layers '0': must be a positive integer");
}

TEST_CASE("a count takes its noun's number in English and the one Chinese form", "[i18n][table]") {
    set_language(Lang::en);
    CHECK(counted(1, "{0} token", "{0} tokens") == "1 token");
    CHECK(counted(0, "{0} token", "{0} tokens") == "0 tokens");
    CHECK(counted(1024, "{0} token", "{0} tokens") == "1,024 tokens");
    set_language(Lang::zh);
    CHECK(counted(1, "{0} token", "{0} tokens") == "1 个 token");
    CHECK(counted(8, "{0} device", "{0} devices") == "8 台设备");
    // The English a JSON document keeps, whatever the reader's language.
    CHECK(counted(1, "{0} token", "{0} tokens", Lang::en) == "1 token");
    CHECK(tr_in(Lang::en, "PASS") == "PASS");
    CHECK(tr_in(Lang::zh, "PASS") == "通过");
    set_language(Lang::en);
}

TEST_CASE("a list of values joins with the reader's words, and Chinese is looked up whatever the run's language", "[i18n]") {
    set_language(Lang::en);
    CHECK(and_list({"--kv-dtype"}).text() == "--kv-dtype");
    CHECK(and_list({"a", "b"}).text() == "a and b");
    CHECK(and_list({"a", "b", "c"}).text() == "a, b and c");
    CHECK(and_list({"a", "b", "c"}).in(Lang::zh) == "a、b 和 c");
    CHECK(tr_in(Lang::zh, "PASS") == "通过");  // an English run asking for the Chinese text
    CHECK(counted(1, "{0} token", "{0} tokens", Lang::zh) == "1 个 token");
}

TEST_CASE("an error keeps the value the user typed, braces included", "[i18n]") {
    const InputError e("--seq-len", "{{1}}", N_("must be a positive integer"));
    CHECK(std::string(e.what()) == "--seq-len '{{1}}': must be a positive integer");
    set_language(Lang::zh);
    CHECK(e.localized() == "--seq-len '{{1}}': 必须是正整数");
    set_language(Lang::en);
}

TEST_CASE("a Prose sentence keeps its English and translates its msgid arguments", "[i18n]") {
    const Prose p{"seq {0} admitted", {"7"}};
    const Prose nested{"{0}: {1}", {"x", "PASS"}, {1}};
    set_language(Lang::zh);
    CHECK(p.text() == "seq 7 admitted");
    CHECK(p.localized() == "序列 7 被接纳");
    CHECK(nested.localized() == "x：通过");
    CHECK(nested.in(Lang::en) == "x: PASS");
    CHECK(texts({p, nested}) == std::vector<std::string>{"seq 7 admitted", "x: PASS"});
    set_language(Lang::en);
    CHECK(p.localized() == "seq 7 admitted");
}

TEST_CASE("every translation keeps exactly its msgid's placeholders", "[i18n]") {
    const std::regex placeholder("\\{[0-9]+\\}");
    auto set_of = [&](const std::string& s) {
        std::set<std::string> out;
        for (auto it = std::sregex_iterator(s.begin(), s.end(), placeholder); it != std::sregex_iterator(); ++it)
            out.insert(it->str());
        return out;
    };
    REQUIRE(zh_catalog().entries().size() > 50);
    for (const auto& [id, str] : zh_catalog().entries()) {
        INFO(id);
        CHECK(set_of(id) == set_of(str));
        CHECK_FALSE(str.empty());
    }
}

#include "inferlab/text/table.hpp"

TEST_CASE("display width counts a CJK or fullwidth character as two columns", "[i18n][table]") {
    CHECK(display_width("键值缓存") == 8);
    CHECK(display_width("KV 缓存") == 7);
    CHECK(display_width("（，）") == 6);      // fullwidth punctuation: U+FF08, U+FF0C, U+FF09
    CHECK(display_width("、。「」") == 8);    // CJK punctuation: U+3001, U+3002, U+300C, U+300D
    CHECK(display_width("α·Δ≈×") == 5);       // Greek and math symbols: narrow
    CHECK(display_width("\xe4\xb8") == 2);    // a truncated sequence: one column per byte, no overrun
}

TEST_CASE("wrap_text breaks Chinese between characters, never before closing punctuation", "[i18n][table]") {
    const std::string text = "每层缓存都按照相同的头数和宽度存储，所以总字节数等于每个值的字节数乘以全部数值的个数。";
    const std::string w = wrap_text(text, 30);
    std::size_t start = 0, lines = 0;
    while (start < w.size()) {
        const std::size_t nl = w.find('\n', start);
        const std::string line = w.substr(start, nl - start);
        CHECK(display_width(line) <= 30);
        CHECK(line.rfind("，", 0) != 0);
        CHECK(line.rfind("。", 0) != 0);
        ++lines;
        start = nl + 1;
    }
    CHECK(lines == 3);  // 88 columns of text in lines of at most 30
    std::string joined;
    for (char c : w)
        if (c != '\n') joined += c;
    CHECK(joined == text);  // no space inserted between Chinese characters
    // Mixed text keeps its spaces: "KV 缓存" is not glued into "KV缓存".
    CHECK(wrap_text("KV 缓存 的大小", 80) == "KV 缓存 的大小\n");
}

TEST_CASE("a table of Chinese cells aligns by display columns", "[i18n][table]") {
    Table t{{"编号", "结果"}, {{"kv.a", "通过"}, {"长编号", "失败"}}, {false, false}};
    CHECK(render_text(t) == "编号    结果\n──────  ────\nkv.a    通过\n长编号  失败\n");
}

#include <fstream>
#include <sstream>

#include "inferlab/answer/verify.hpp"

namespace {

// `term` in `text` as a whole word or phrase: not inside a longer word, a flag or a name.
bool has_term(const std::string& text, const std::string& term) {
    auto part_of_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
    for (std::size_t at = text.find(term); at != std::string::npos; at = text.find(term, at + 1)) {
        const bool left = at == 0 || !part_of_word(text[at - 1]);
        const bool right = at + term.size() == text.size() || !part_of_word(text[at + term.size()]);
        if (left && right) return true;
    }
    return false;
}

}  // namespace

// The documents are not in this repository (they live under shared/seeds/), so each glossary term
// was checked against its document when it was added; here the catalogue is held to the glossary.
TEST_CASE("the catalogue uses the glossary's document terms wherever their English appears", "[i18n]") {
    std::ifstream in(std::string(INFERLAB_TEST_DATA) + "/../../docs/glossary.tsv");
    REQUIRE(in);
    std::size_t rows = 0, used = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#' || line.rfind("english\t", 0) == 0) continue;
        std::vector<std::string> cols;
        std::istringstream fields(line);
        for (std::string f; std::getline(fields, f, '\t');) cols.push_back(f);
        INFO(line);
        REQUIRE(cols.size() == 4);
        CHECK((cols[2] == kDoc1 || cols[2] == kDoc2));
        CHECK_FALSE(cols[3].empty());
        ++rows;
        bool any = false;
        for (const auto& [id, str] : zh_catalog().entries()) {
            if (!has_term(id, cols[0])) continue;
            any = true;
            INFO("msgid: " << id << "\nmsgstr: " << str);
            CHECK(str.find(cols[1]) != std::string::npos);
        }
        used += any ? 1 : 0;
    }
    CHECK(rows >= 20);
    CHECK(used >= 8);  // the kv-mem and verify messages use at least these terms today
}
