#pragma once
// Typed errors of the library. main() turns every inferlab::Error into one line
// "inferlab: error: ..." on stderr and exit status 2; the library never prints.
// Each error keeps its rule as an English msgid (with {0}, {1}... arguments where it has values),
// so the printer can show it in the reader's language: localized() (see i18n.hpp). what() is
// always the English text.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "inferlab/base/i18n.hpp"

namespace inferlab {

// Base of every error the user can cause (bad flag, bad file, overflow). The message is a Prose
// sentence: what() is its English text(), localized() the same sentence in the reader's language.
class Error : public std::runtime_error {
public:
    // A message that is itself a msgid: translated whole when the catalogue has it ("{{" and "}}"
    // print as braces; a value the user typed goes in as an argument, never into the msgid).
    explicit Error(const std::string& message) : Error(Prose{message, {}}) {}
    // A msgid with values: Error(N_("unknown subcommand '{0}' (the subcommands: {1})"), {word, names}).
    Error(const std::string& msgid, std::vector<std::string> args) : Error(Prose{msgid, std::move(args)}) {}
    // A sentence whose values may be msgids or sentences of their own (Prose::msgid_args, clauses).
    explicit Error(Prose message) : std::runtime_error(message.text()), message_(std::move(message)) {}
    // The message in the current language (English where the catalogue has no entry).
    virtual std::string localized() const { return message_.localized(); }

private:
    Prose message_;
};

// A value given on the command line or in a file broke a rule.
// Message form: "<where> '<value>': <rule>", e.g. "--layers '0': must be a positive integer".
// The rule is a msgid: a fixed one (mark the literal with N_ at the throw site), or one with
// values given as `rule_args` ("must be at most {0}", {"4,096"}), or a Prose whose values are
// msgids themselves ("is not drawn: {0}" with the reason).
class InputError : public Error {
public:
    InputError(const std::string& where, const std::string& value, const std::string& rule,
               std::vector<std::string> rule_args = {})
        : InputError(where, value, Prose{rule, std::move(rule_args)}) {}
    // where and value are values of the sentence, never patterns: a "{{" the user typed stays.
    InputError(const std::string& where, const std::string& value, Prose rule)
        : Error(Prose{"{0} '{1}': {2}", {where, value}, {}, {rule}}), where_(where), value_(value), rule_(std::move(rule)) {}
    // For rules that concern a combination of flags rather than one value.
    explicit InputError(const std::string& message) : Error(message) {}
    InputError(const std::string& msgid, std::vector<std::string> args) : Error(msgid, std::move(args)) {}
    explicit InputError(Prose message) : Error(std::move(message)) {}
    const std::string& where() const { return where_; }
    const std::string& value() const { return value_; }
    // The rule in English ("must be a positive integer").
    std::string rule() const { return rule_.text(); }
    // The same rule, echoing `value` as the user typed it (the library may have read "1B" as "1 B").
    InputError with_value(const std::string& value) const {
        if (rule_.empty()) return *this;  // a message-only error echoes no value
        return InputError(where_, value, rule_);
    }
    // The same rule said of another input: a library's term replaced by the caller's flag. The
    // rule keeps its msgid and arguments, so the renamed error still translates.
    InputError renamed(const std::string& where) const {
        if (rule_.empty()) return *this;  // a message-only error names no input
        return InputError(where, value_, rule_);
    }

private:
    std::string where_, value_;
    Prose rule_;  // empty for a message-only error
};

// An exact integer result does not fit the type that must hold it. `what` is a msgid.
class OverflowError : public Error {
public:
    explicit OverflowError(const std::string& what)
        : Error(Prose{N_("{0} overflows 64 bits (the result is larger than 18,446,744,073,709,551,615)"), {what}, {0}}) {}
};

// A file could not be opened or read. `why` is a msgid.
class FileError : public Error {
public:
    FileError(const std::string& path, const std::string& why) : FileError(path, Prose{why, {}}) {}
    // A reason with values: FileError(path, Prose{N_("is {0} bytes, ..."), {size, limit}}).
    FileError(const std::string& path, Prose why)
        : Error(Prose{N_("file '{0}': {1}"), {path}, {}, {why}}), path_(path), why_(std::move(why)) {}
    const std::string& path() const { return path_; }
    // What is wrong with the file, without its path: for a caller that names the flag instead.
    const Prose& why() const { return why_; }

private:
    std::string path_;
    Prose why_;
};

}  // namespace inferlab
