#pragma once
// Typed errors of the library. main() turns every inferlab::Error into one line
// "inferlab: error: ..." on stderr and exit status 2; the library never prints.
#include <stdexcept>
#include <string>

namespace inferlab {

// Base of every error the user can cause (bad flag, bad file, overflow).
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A value given on the command line or in a file broke a rule.
// Message form: "<where> '<value>': <rule>", e.g. "--layers '0': must be a positive integer".
class InputError : public Error {
public:
    InputError(const std::string& where, const std::string& value, const std::string& rule)
        : Error(where + " '" + value + "': " + rule), where_(where), value_(value), rule_(rule) {}
    // For rules that concern a combination of flags rather than one value.
    explicit InputError(const std::string& message) : Error(message) {}
    const std::string& where() const { return where_; }
    const std::string& value() const { return value_; }
    const std::string& rule() const { return rule_; }

private:
    std::string where_, value_, rule_;
};

// An exact integer result does not fit the type that must hold it.
class OverflowError : public Error {
public:
    explicit OverflowError(const std::string& what)
        : Error(what + " overflows 64 bits (the result is larger than 18,446,744,073,709,551,615)") {}
};

// A file could not be opened or read.
class FileError : public Error {
public:
    FileError(const std::string& path, const std::string& why) : Error("file '" + path + "': " + why), why_(why) {}
    // What is wrong with the file, without its path (for a caller that names the flag instead).
    const std::string& why() const { return why_; }

private:
    std::string why_;
};

}  // namespace inferlab
