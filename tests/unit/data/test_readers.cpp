// The file-format readers (data/readers.hpp): number files, matrix files and ROWSxCOLS, each way
// they can be wrong an error naming the caller's flag, the value and the rule.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "inferlab/base/error.hpp"
#include "inferlab/data/readers.hpp"

using namespace inferlab;
namespace fs = std::filesystem;

namespace {

// A file with `text` under the temporary directory, removed at the end of the test.
struct TempFile {
    fs::path path;
    TempFile(const std::string& name, const std::string& text)
        : path(fs::temp_directory_path() / ("inferlab-readers-" + std::to_string(::getpid()) + "-" + name)) {
        std::ofstream(path) << text;
    }
    ~TempFile() {
        std::error_code ec;
        fs::remove(path, ec);
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
};

// The message of the InputError `f` throws ("" when it throws none).
template <typename F>
std::string input_error(F f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("readers: parse_dims reads N and ROWSxCOLS", "[unit][readers]") {
    const MatrixShape a = parse_dims("--gen", "1024", 10'000'000, true);
    CHECK(a.rows == 1);
    CHECK(a.cols == 1024);
    const MatrixShape b = parse_dims("--kv-gen", "256x128", 4'000'000, false);
    CHECK(b.rows == 256);
    CHECK(b.cols == 128);
    const MatrixShape c = parse_dims("--kv-gen", "2000x2000", 4'000'000, false);  // exactly the limit
    CHECK(c.rows * c.cols == 4'000'000);
}

TEST_CASE("readers: parse_dims refuses zero, junk, overflow and too many values, naming the flag", "[unit][readers]") {
    const std::string zero = input_error([] { parse_dims("--kv-gen", "0x128", 100, false); });
    CHECK(has(zero, "--kv-gen"));
    CHECK(has(zero, "'0'"));
    CHECK(has(input_error([] { parse_dims("--gen", "64x0", 100, true); }), "--gen"));
    CHECK(has(input_error([] { parse_dims("--kv-gen", "256", 1000, false); }), "must be ROWSxCOLS"));
    CHECK(has(input_error([] { parse_dims("--gen", "4x4x4", 1000, true); }), "one 'x'"));
    CHECK(has(input_error([] { parse_dims("--gen", "abc", 1000, true); }), "--gen"));
    CHECK(has(input_error([] { parse_dims("--gen", "8xabc", 1000, true); }), "--gen"));
    CHECK(has(input_error([] { parse_dims("--gen", "x8", 1000, true); }), "--gen"));
    CHECK(has(input_error([] { parse_dims("--gen", "", 1000, true); }), "is empty"));
    // 2^62 × 4 wraps to 0 in 64 bits: refused by the factor check, not accepted as 0 values.
    const std::string wrap = input_error([] { parse_dims("--gen", "4611686018427387904x4", 10'000'000, true); });
    CHECK(has(wrap, "at most 10,000,000 values"));
    CHECK(has(input_error([] { parse_dims("--gen", "4000x4000", 10'000'000, true); }), "at most 10,000,000 values"));
    CHECK(has(input_error([] { parse_dims("--gen", "99999999999999999999999", 10, true); }), "--gen"));
}

TEST_CASE("readers: a number file keeps the items as typed, any separator", "[unit][readers]") {
    const TempFile f("list.txt", "# a comment\n0.6, 0.3\n0.1\t\n\n");
    CHECK(read_number_items("--p-file", f.path.string(), 10) == std::vector<std::string>{"0.6", "0.3", "0.1"});
    const TempFile crlf("crlf.txt", "0.5\r\n0.5\r\n");
    CHECK(read_number_items("--q-file", crlf.path.string(), 10) == std::vector<std::string>{"0.5", "0.5"});
}

TEST_CASE("readers: number file errors name the flag: empty, bad number, NaN, inf, too many", "[unit][readers]") {
    const TempFile empty("empty.txt", "\n# nothing\n");
    const std::string e = input_error([&] { read_number_items("--p-file", empty.path.string(), 10); });
    CHECK(has(e, "--p-file"));
    CHECK(has(e, "holds no numbers"));
    const TempFile bad("bad.txt", "0.5\n0.2,abc\n");
    const std::string b = input_error([&] { read_number_items("--p-file", bad.path.string(), 10); });
    CHECK(has(b, "--p-file line 2 'abc'"));
    CHECK(has(b, "is not a number"));
    for (const std::string v : {"nan", "inf", "-inf", "1e999"}) {
        INFO(v);
        const TempFile nf("nonfinite.txt", "0.5," + v + "\n");
        const std::string m = input_error([&] { read_number_items("--q-file", nf.path.string(), 10); });
        CHECK(has(m, "--q-file line 1"));
        CHECK((has(m, "finite") || has(m, "not a number") || has(m, "out of range")));
    }
    const TempFile many("many.txt", "1,2,3,4\n");
    CHECK(has(input_error([&] { read_number_items("--p-file", many.path.string(), 3); }), "holds more than 3 values"));
    CHECK_THROWS_AS(read_number_items("--p-file", "/nonexistent/inferlab-no-such-file", 3), FileError);
}

TEST_CASE("readers: a matrix file reads rows and refuses ragged rows, bad numbers and too many", "[unit][readers]") {
    const TempFile ok("m.csv", "# K\n1,2,3\n4,5,6\n");
    const Matrix m = read_matrix_file("--k-file", ok.path.string(), 100);
    CHECK(m.rows == 2);
    CHECK(m.cols == 3);
    CHECK(m.v == std::vector<double>{1, 2, 3, 4, 5, 6});
    const TempFile ragged("r.csv", "1,2\n3\n");
    CHECK(has(input_error([&] { read_matrix_file("--file", ragged.path.string(), 100); }),
              "--file line 2 '3': has 1 value; earlier rows have 2"));
    const TempFile nan("n.csv", "1,nan\n");
    CHECK(has(input_error([&] { read_matrix_file("--file", nan.path.string(), 100); }), "--file line 1 'nan'"));
    const TempFile junk("j.csv", "1,,2\n");
    CHECK(has(input_error([&] { read_matrix_file("--v-file", junk.path.string(), 100); }), "--v-file line 1"));
    const TempFile empty("e.csv", "");
    CHECK(has(input_error([&] { read_matrix_file("--file", empty.path.string(), 100); }), "holds no numbers"));
    const TempFile many("big.csv", "1,2\n3,4\n5,6\n");
    CHECK(has(input_error([&] { read_matrix_file("--file", many.path.string(), 5); }), "holds more than 5 values"));
}
