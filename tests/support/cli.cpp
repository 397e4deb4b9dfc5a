#include "cli.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace inferlab::test {
namespace {

std::string slurp_and_remove(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::remove(path.c_str());
    return ss.str();
}

// INFERLAB_TEST_RECORD=FILE appends each run's cwd, environment and arguments to FILE as one JSON
// line, so that scripts/compare-outputs.py can replay the suite's own inputs against two binaries
// (the check that a refactoring left every output byte-identical).
void record_run(const std::vector<std::string>& args, const std::string& cwd, const std::vector<std::string>& env) {
    const char* path = std::getenv("INFERLAB_TEST_RECORD");
    if (path == nullptr || *path == '\0') return;
    std::ofstream log(path, std::ios::app);
    log << nlohmann::json{{"cwd", cwd}, {"env", env}, {"args", args}}.dump() << "\n";
}

int make_temp(std::string& path) {
    char tmpl[] = "/tmp/inferlab-test-XXXXXX";
    int fd = mkstemp(tmpl);
    path = tmpl;
    return fd;
}

}  // namespace

CliResult run_inferlab(const std::vector<std::string>& args, const std::string& cwd, const std::vector<std::string>& env) {
    record_run(args, cwd, env);
    std::string out_path, err_path;
    int out_fd = make_temp(out_path), err_fd = make_temp(err_path);
    REQUIRE(out_fd >= 0);
    REQUIRE(err_fd >= 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
        // English unless the test sets a language in `env`: a developer's own zh_CN locale must
        // not change what the tests read.
        for (const char* v : {"INFERLAB_LANG", "LC_ALL", "LC_MESSAGES", "LANG"}) unsetenv(v);
        for (const auto& e : env) {
            const auto eq = e.find('=');
            if (eq == std::string::npos || setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1) != 0) _exit(125);
        }
        std::vector<char*> argv;
        std::string bin = INFERLAB_BIN;
        argv.push_back(bin.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(bin.c_str(), argv.data());
        _exit(127);
    }
    close(out_fd);
    close(err_fd);
    int status = 0;
    waitpid(pid, &status, 0);
    CliResult r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp_and_remove(out_path);
    r.err = slurp_and_remove(err_path);
    return r;
}

std::string data_path(const std::string& name) { return std::string(INFERLAB_TEST_DATA) + "/" + name; }

nlohmann::json parse_json(const CliResult& r) {
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    nlohmann::json j;
    REQUIRE_NOTHROW(j = nlohmann::json::parse(r.out));
    return j;
}

bool one_error_line(const CliResult& r) {
    if (r.err.rfind("inferlab: error: ", 0) != 0) return false;
    auto nl = r.err.find('\n');
    return nl == r.err.size() - 1;
}

void expect_error(const std::vector<std::string>& args, const std::string& fragment) {
    INFO("args: " << Catch::Detail::stringify(args));
    auto r = run_inferlab(args);
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(one_error_line(r));
    CHECK(r.err.find(fragment) != std::string::npos);
}

std::uint64_t mem_available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    while (meminfo >> key >> kib) {
        if (key == "MemAvailable:") return kib * 1024;
        meminfo.ignore(64, '\n');
    }
    return 0;
}

}  // namespace inferlab::test
