// Findings of issue #30 (a reliability campaign: faults that cost a user data or a machine), each
// as the input that caused it and what it must now do: exit 2 with one line, within seconds, with
// no large allocation; or, where the input was valid, the result computed without the waste.
// The inputs are made here from a shipped model (model init) and the tree's seed files.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/cli.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;
namespace fs = std::filesystem;

namespace {

std::string str(const fs::path& p) { return p.string(); }

// A demo-gqa checkpoint (tied classifier, seq_len 1024: the legacy RoPE tables at its end).
fs::path demo_checkpoint(const Scratch& s) {
    const fs::path ck = s.path / "demo.bin";
    const auto r = run_inferlab({"model", "init", "--model", "demo-gqa", "--out", str(ck)});
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
    return ck;
}

std::string read_all(const fs::path& p) { return slurp(p); }

void write_all(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
    REQUIRE(f);
}

void set_int32(std::string& bytes, std::size_t offset, std::int32_t v) {
    for (int i = 0; i < 4; ++i) bytes[offset + std::size_t(i)] = static_cast<char>((std::uint32_t(v) >> (8 * i)) & 0xff);
}

// Runs `script` under sh with the binary as $0; its exit status.
int sh(const std::string& script) {
    const std::string cmd = "sh -c '" + script + "' \"" + std::string(INFERLAB_BIN) + "\"";
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("checkpoint: a header that does not give the file's exact size is refused, not read as another model",
          "[cli][files][checkpoint]") {
    Scratch s("ck-size");
    const std::string good = read_all(demo_checkpoint(s));
    const fs::path bad = s.path / "bad.bin";
    SECTION("seq_len 1024 → 8,389,632 (byte 26 = 0x80): once 15 GB of caches and the OOM killer") {
        std::string b = good;
        b[26] = static_cast<char>(0x80);
        write_all(bad, b);
        expect_error({"model", "logits", "--checkpoint", str(bad), "--tokens", "0,1,5"}, "a corrupt header or another format");
        expect_error({"model", "generate", "--checkpoint", str(bad), "--prompt", "0,1", "--steps", "2"}, "a corrupt header");
    }
    SECTION("vocab 512 → 640 (byte 20 = 0x80): once read as a 640-token model, exit 0") {
        std::string b = good;
        b[20] = static_cast<char>(0x80);
        write_all(bad, b);
        expect_error({"model", "logits", "--checkpoint", str(bad), "--tokens", "1"}, "a corrupt header or another format");
    }
    SECTION("a file one byte short of the whole") {
        write_all(bad, good.substr(0, good.size() - 1));
        expect_error({"model", "logits", "--checkpoint", str(bad), "--tokens", "1"},
                     "is " + std::to_string(good.size() - 1) + " bytes, where a version-0 llama2.c file of its header's dims is " +
                         std::to_string(good.size()) + " (with the legacy RoPE tables) or ");
    }
}

TEST_CASE("checkpoint: a tied model's file without the RoPE tables and a huge seq_len caches only the positions used",
          "[cli][files][checkpoint]") {
    // Valid (run.c reads a tied model's file without the tables), and its size does not bound
    // seq_len: 8,389,632 positions once meant two caches of 19 GB each before the first token.
    Scratch s("ck-seq");
    std::string b = read_all(demo_checkpoint(s));
    const std::size_t tables = std::size_t(1024) * 48 * 4;  // seq_len × head_dim floats
    b = b.substr(0, b.size() - tables);
    set_int32(b, 24, 8389632);
    const fs::path ck = s.path / "long.bin";
    write_all(ck, b);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"model", "logits", "--checkpoint", str(ck), "--tokens", "0,1,5", "--json"},
          std::vector<std::string>{"model", "generate", "--checkpoint", str(ck), "--prompt", "0,1", "--steps", "3", "--json"},
          std::vector<std::string>{"model", "check-cache", "--checkpoint", str(ck), "--tokens", "0,1,5,7", "--json"},
          // The quantized caches and the pitfalls' caches too (they once held seq_len positions).
          std::vector<std::string>{"model", "kv-quant", "--checkpoint", str(ck), "--positions", "16", "--steps", "4", "--json"},
          std::vector<std::string>{"model", "pitfall", "position-restart", "--checkpoint", str(ck), "--json"},
          std::vector<std::string>{"model", "pitfall", "unmasked-padding", "--checkpoint", str(ck), "--json"},
          std::vector<std::string>{"model", "pitfall", "same-distribution", "--checkpoint", str(ck), "--json"}}) {
        INFO(args[1] << " " << args[2]);
        const auto r = run_inferlab(args);
        INFO("stderr: " << r.err);
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        CHECK(parse_json(r).is_object());
    }
    // The largest child's peak resident memory, in KiB: under 1 GB, where 2 × 19 GB of caches
    // once went (the peak of an earlier, smaller child would show here too, never a larger one).
    struct rusage after {};
    ::getrusage(RUSAGE_CHILDREN, &after);
    CHECK(after.ru_maxrss < 1000000);
}

TEST_CASE("simulations and grids: sizes that once ended in exit 3 or a runaway are exit-2 errors", "[cli][files][budget]") {
    // "cannot create std::vector larger than max_size()", exit 3.
    expect_error({"best-of-n", "--p", "0.3", "--n", "9223372036854775808", "--simulate", "1"},
                 "--simulate '1': with the N asked for would simulate more than 250,000,000 candidate draws");
    // A vector of N (48 GB), an int counting to N.
    expect_error({"best-of-n", "--p", "0.3", "--n", "4294967296", "--simulate", "1"}, "candidate draws (trials × the sum of N");
    // Over 15 s of draws: trials × ΣN = 10^7 × 136.
    expect_error({"best-of-n", "--p", "0.3", "--n", "1..16", "--tpr", "0.9", "--fpr", "0.2", "--simulate", "10000000"},
                 "(trials × the sum of N, × the answers with a distribution)");
    // The grid's largest level Q·Δ at infinity: exit 3 in JSON, inf levels in SVG and CSV.
    expect_error({"figure", "doc1-fig15", "--step", "1e308", "--json"}, "--step '1e308': makes the largest level Q·Δ");
    Scratch s("grid");
    expect_error({"quantize", "--x", "0.37", "--step", "1e308", "--qmax", "7", "--svg", str(s.path / "q.svg")},
                 "--step '1e308': makes the largest level Q·Δ (Q = 7) larger than the largest double");
    CHECK_FALSE(fs::exists(s.path / "q.svg"));
}

TEST_CASE("decode-roofline: a generation of the documented maximum length is summed, not walked", "[cli][files][budget]") {
    // 10^7 output tokens at 64 batch sizes once walked 6.4·10^8 steps for minutes; the sum is now
    // in closed form over the runs where every step is linear in S (unit test: equal to the steps
    // added one by one).
    const auto r = run_inferlab({"decode-roofline", "--model", "gemma-2-9b", "--hw", "h100-sxm", "--prompt-len", "1000",
                                 "--output-len", "10000000", "--batch", "1..64", "--json"});
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
    const auto j = parse_json(r);
    REQUIRE(j["generation"].size() == 64);
    for (const auto& row : j["generation"]) {
        CHECK(row["decode_steps"] == 9999999);
        CHECK(row["decode_total_s"].get<double>() > row["last_step_s"].get<double>());
    }
}

TEST_CASE("spec-accept: a simulation over a large vocabulary is bounded by samples × vocabulary", "[cli][files][budget]") {
    // 200,000 tokens at 10,000 samples once took 58 s.
    Scratch s("vocab");
    std::string list;
    for (int i = 0; i < 200000; ++i) list += "0.000005\n";
    write_all(s.path / "p.txt", list);
    expect_error({"spec-accept", "--p-file", str(s.path / "p.txt"), "--q-file", str(s.path / "p.txt"), "--simulate", "10000"},
                 "--simulate '10000': times the 200,000-token vocabulary is more than 200,000,000 draws in one run");
    const auto ok = run_inferlab({"spec-accept", "--p-file", str(s.path / "p.txt"), "--q-file", str(s.path / "p.txt"),
                                  "--simulate", "100", "--json"});
    INFO("stderr: " << ok.err);
    CHECK(ok.status == 0);
}

TEST_CASE("simulation: the same seed gives the same estimates with no per-candidate memory", "[cli][files][budget]") {
    // The simulation replays each trial's draws instead of storing them: the figures of a seed
    // are those the stored vectors gave (the Monte Carlo tests pin them too).
    const auto a = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1,4,16", "--tpr", "0.9", "--fpr", "0.2",
                                            "--simulate", "20000", "--seed", "7", "--json"}));
    const auto b = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1,4,16", "--tpr", "0.9", "--fpr", "0.2",
                                            "--simulate", "20000", "--seed", "7", "--json"}));
    CHECK(a == b);
    REQUIRE(a["simulation"]["rows"].size() >= 6);
    // N = 10^7 candidates per trial, within the work budget: it once allocated 120 MB per 10^7
    // (an int and a size_t per candidate); now nothing per candidate.
    const auto big = run_inferlab({"best-of-n", "--p", "0.3", "--n", "10000000", "--tpr", "0.9", "--fpr", "0.2",
                                   "--simulate", "3", "--json"});
    INFO("stderr: " << big.err);
    REQUIRE(big.status == 0);
    const auto j = parse_json(big);  // held: a range-for over a part of a temporary reads freed memory
    for (const auto& row : j["simulation"]["rows"]) {
        INFO(row.dump());
        CHECK(row["estimate"].get<double>() >= 0);
        CHECK(row["estimate"].get<double>() <= 1);
    }
}

TEST_CASE("input files: a FIFO, a device and an oversized file are refused before they are read", "[cli][files]") {
    Scratch s("inputs");
    // /dev/zero once grew to 2.3 GB in 10 s and never ended.
    expect_error({"kv-mem", "--config", "/dev/zero", "--seq-len", "1"},
                 "--config '/dev/zero': is not a regular file (a FIFO, a device or a socket)");
    expect_error({"spec-accept", "--p-file", "/dev/urandom", "--q-file", data_path("p.txt"), "--gamma", "2"},
                 "is not a regular file");
    // A FIFO blocked forever in open().
    const fs::path fifo = s.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    expect_error({"kv-mem", "--config", str(fifo), "--seq-len", "1"}, "is not a regular file");
    expect_error({"model", "logits", "--checkpoint", str(fifo), "--tokens", "1"}, "is not a regular file");
    // A config is kilobytes.
    const fs::path big = s.path / "big.json";
    write_all(big, std::string(5u << 20, ' '));
    expect_error({"kv-mem", "--config", str(big), "--seq-len", "1"}, "': is 5,242,880 B = ");
    expect_error({"kv-mem", "--config", str(big), "--seq-len", "1"}, ", more than the 4,194,304 B = ");
}

TEST_CASE("outputs: one that is an input is refused before anything is read or written", "[cli][files][output]") {
    Scratch s("same");
    const fs::path p = s.path / "p.txt";
    fs::copy_file(data_path("p.txt"), p);
    const std::string before = read_all(p);
    expect_error({"spec-accept", "--p-file", str(p), "--q-file", data_path("p.txt"), "--gamma", "2", "--svg", str(p)},
                 "--svg '" + str(p) + "': is the same file as --p-file '" + str(p) + "', which this command reads");
    // Another spelling of the same file, and the --flag=value form.
    const std::string other = str(s.path / "." / "p.txt");
    expect_error({"spec-accept", "--p-file", str(p), "--q-file", data_path("p.txt"), "--gamma", "2", "--svg=" + other},
                 "is the same file as --p-file");
    CHECK(read_all(p) == before);
    // A checkpoint once became a 13 KB SVG.
    const fs::path ck = demo_checkpoint(s);
    const std::string weights = read_all(ck);
    expect_error({"model", "check-cache", "--checkpoint", str(ck), "--svg", str(ck)}, "is the same file as --checkpoint");
    expect_error({"figure", "doc1-fig4", "--checkpoint", str(ck), "--out", str(ck)}, "is the same file as --checkpoint");
    const fs::path cfg = s.path / "c.json";
    fs::copy_file(data_path("doc1-7b.json"), cfg);
    expect_error({"decode-roofline", "--config", str(cfg), "--seq-len", "1024", "--bandwidth", "1TB/s", "--svg", str(cfg)},
                 "is the same file as --config");
    CHECK(read_all(ck) == weights);
}

TEST_CASE("outputs: a failed write leaves the old file, and concurrent writers leave one whole file", "[cli][files][output]") {
    Scratch s("write");
    const fs::path svg = s.path / "r.svg";
    write_all(svg, "old");
    const std::string args = "decode-roofline --weights-bytes 14GB --kv-bytes-per-request 1GiB --bandwidth 1TB/s --batch 1,8";
    // A file-size limit of 4 blocks: the write fails (SIGXFSZ ignored, so write() says EFBIG).
    const int rc = sh("trap \"\" XFSZ; ulimit -f 4; exec \"$0\" " + args + " --svg " + str(svg) + " >/dev/null 2>&1");
    CHECK(rc == 2);
    CHECK(read_all(svg) == "old");
    // Nothing but r.svg is left in the folder (the temporary file was removed).
    int files = 0;
    for (const auto& e : fs::directory_iterator(s.path)) files += e.path().filename() != "r.svg";
    CHECK(files == 0);
    // Six runs writing one file at once, each a different figure (--batch 1,i), five rounds: the
    // file is always one run's whole output, never a mix.
    std::vector<std::string> outputs;
    for (int i = 2; i <= 7; ++i) {
        const fs::path one = s.path / ("one-" + std::to_string(i) + ".svg");
        const auto r = run_inferlab({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB",
                                     "--bandwidth", "1TB/s", "--batch", "1," + std::to_string(i), "--svg", str(one)});
        REQUIRE(r.status == 0);
        outputs.push_back(read_all(one));
    }
    const std::string base = "decode-roofline --weights-bytes 14GB --kv-bytes-per-request 1GiB --bandwidth 1TB/s";
    for (int round = 0; round < 5; ++round) {
        const int all = sh("for i in 2 3 4 5 6 7; do \"$0\" " + base + " --batch 1,$i --svg " + str(svg) +
                           " >/dev/null & done; wait");
        CHECK(all == 0);
        const std::string got = read_all(svg);
        CHECK(std::find(outputs.begin(), outputs.end(), got) != outputs.end());
    }
}

TEST_CASE("values: an empty value is an error, never \"not given\"", "[cli][files][errors]") {
    // A script's --checkpoint "$CKPT" with CKPT unset once computed on random weights, exit 0.
    expect_error({"model", "logits", "--checkpoint", "", "--tokens", "1,2,3"},
                 "--checkpoint '': is empty: give a value, or leave the flag out for its default");
    expect_error({"kv-mem", "--model", "llama-2-7b", "--seq-len", "4096", "--budget", ""}, "--budget '': is empty");
    expect_error({"kv-mem", "--model", "llama-2-7b", "--seq-len", "4096", "--tp="}, "--tp '': is empty");
    expect_error({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", ""}, "--cost-ratio '': is empty");
}

TEST_CASE("errors: the prefix is inferlab: error: in every language", "[cli][files][errors]") {
    const auto r = run_inferlab({"kv-mem", "--model", "llama-2-7b", "--seq-len", "0", "--lang", "zh"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("inferlab: error: --seq-len '0': ", 0) == 0);
    CHECK(one_error_line(r));
}

TEST_CASE("review findings: overflowing sums, one-token vocabularies and 2^32 config values are exit-2 errors", "[cli][files][errors]") {
    // An internal error (exit 3): the sum of 1e308 + 1e308 is infinite, the normalized q all zeros.
    expect_error({"spec-accept", "--p", "0.5,0.5", "--q", "1e308,1e308", "--normalize", "--simulate", "1000"},
                 "--q 'sum > 1.8e308': entries must sum to a finite number");
    // A wrong result with exit 0: p printed as [0, 0].
    expect_error({"spec-accept", "--p", "1e308,1e308", "--q", "0.5,0.5", "--normalize"}, "--p 'sum > 1.8e308'");
    Scratch s("review");
    auto config = [&](const std::string& name, const std::string& key, const std::string& value) {
        std::ifstream in(data_path("tiny-model.json"));
        std::string text{std::istreambuf_iterator<char>(in), {}};
        const auto at = text.find("\"" + key + "\"");
        REQUIRE(at != std::string::npos);
        const auto colon = text.find(':', at), end = text.find_first_of(",}", colon);
        text.replace(colon + 1, end - colon - 1, " " + value);
        write_all(s.path / name, text);
        return str(s.path / name);
    };
    // Rng::below(0), exit 3.
    expect_error({"model", "pitfall", "stale-cache", "--config", config("v1.json", "vocab_size", "1")},
                 "vocab_size '1': must be at least 2 for the pitfalls");
    // 2^32 + 64 was read as 64, exit 0.
    expect_error({"model", "init", "--config", config("h.json", "hidden_size", "4294967360"), "--out", str(s.path / "h.bin")},
                 "hidden_size '4294967360': must be at most 2,147,483,647 for the reference model");
    CHECK_FALSE(fs::exists(s.path / "h.bin"));
    // Minutes of a loop at N = 10^12 (the beta-binomial coverage): now a closed form.
    const auto r = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1000000000000", "--rho", "0.3", "--json"});
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
}

TEST_CASE("model bench and roofline: the probe's size is checked against the machine and named by its flag", "[cli][files][budget]") {
    // 2^44 MiB once shifted past 2^64 in model roofline and wrapped to a 0-byte probe.
    expect_error({"model", "roofline", "--model", "demo-gqa", "--probe-mib", "17592186044416"},
                 "--probe-mib '17592186044416': must be at most 1,048,576 MiB");
    // 1 TiB, where this machine has less available (the refusal names --probe-mib, not the
    // library's "bandwidth probe").
    const std::uint64_t avail = mem_available_bytes();
    if (avail == 0 || avail >= (std::uint64_t{1} << 40)) {
        WARN("this machine has 1 TiB available; the refusal is not exercised here");
        return;
    }
    for (const char* command : {"bench", "roofline"})
        expect_error({"model", command, "--model", "demo-gqa", "--probe-mib", "1048576"},
                     "--probe-mib '1048576': needs 1,099,511,627,776 B = 1 TiB");
}

TEST_CASE("outputs in place: a FIFO nobody reads is an error, and /dev/stdout into a file keeps the text after the SVG",
          "[cli][files][output]") {
    Scratch s("in-place");
    // open() of a FIFO with no reader waited forever (model init --out, --svg).
    const fs::path fifo = s.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    expect_error({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--svg", str(fifo)},
                 "--svg '" + str(fifo) + "': is a FIFO that no program is reading");
    expect_error({"model", "init", "--model", "demo-gqa", "--out", str(fifo)},
                 "--out '" + str(fifo) + "': is a FIFO that no program is reading");
    // `--svg /dev/stdout > f`: the SVG was written from the file's start again, and the text
    // printed after it overwrote its first bytes, exit 0. Now both go through standard output.
    const fs::path out = s.path / "both.txt";
    const std::string cmd = std::string("'") + INFERLAB_BIN + "' spec-accept --alpha 0.8 --gamma 4 --svg /dev/stdout > '" + str(out) + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string both = read_all(out);
    const auto svg_end = both.find("</svg>");
    REQUIRE(both.rfind("<?xml", 0) == 0);
    REQUIRE(svg_end != std::string::npos);
    CHECK(both.find("A round at acceptance rate", svg_end) != std::string::npos);  // the text, whole, after the SVG
    CHECK(both.substr(svg_end + 6) == run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4"}).out.insert(0, "\n"));
}

TEST_CASE("decode-roofline: a byte count past 64 bits is said of the flags that set the lengths", "[cli][files][errors]") {
    // Once "total KV bytes overflows 64 bits", naming no flag and no value.
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--prompt-len", "1e15", "--output-len", "5"},
                 "--prompt-len '1e15': with --prompt-len 1e15, --output-len 5: total KV bytes overflows 64 bits");
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "3e12", "--batch", "64"},
                 "--seq-len '3e12': with --seq-len 3e12, --batch 64: KV bytes of the batch overflows 64 bits");
}
