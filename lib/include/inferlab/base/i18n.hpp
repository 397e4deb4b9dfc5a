#pragma once
// Messages in the reader's language. Code writes English msgids; a GNU gettext catalogue
// (po/zh_CN.po, compiled to the standard .mo format by msgfmt and embedded in the binary by the
// build) gives their Chinese form. The catalogue is read here, not through glibc's gettext(),
// which translates only when the zh_CN locale is generated on the machine (Debian images and CI
// have only C.UTF-8): reading the .mo ourselves makes --lang zh work everywhere.
//
//   set_language(Lang::zh);
//   tr("passed");                                      // "通过"
//   trf("{0} must be at most {1}", "--layers", 4096);  // a translation may reorder {0} and {1}
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

// Marks a msgid where it is stored (a table title, an error rule) for xgettext (--keyword=N_);
// the printer translates it with tr() when it prints. Expands to its argument.
#define N_(text) text
// The same, with a context (xgettext --keyword=NC_:1c,2): one English text with two meanings gets
// a translation for each ("aggregate tok/s" is a bound in decode-roofline and a measurement in
// model bench). The printer translates it with trc(context, text).
#define NC_(context, text) text

namespace inferlab {

enum class Lang { en, zh };

// A catalogue that is not a valid .mo file: a build defect, never the user's input.
class CatalogError : public std::runtime_error {
public:
    explicit CatalogError(const std::string& what) : std::runtime_error("message catalogue: " + what) {}
};

// A parsed .mo catalogue (GNU gettext's binary format, either byte order): msgid -> msgstr.
// The header entry (empty msgid) and plural forms are not kept: inferlab uses neither.
class Catalog {
public:
    // Throws CatalogError on a wrong magic number, a table or string outside `bytes`, or a string
    // without its terminating NUL.
    static Catalog parse(std::string_view bytes);
    // The translation of `msgid`, or nullptr when the catalogue has none.
    const std::string* find(const std::string& msgid) const;
    const std::unordered_map<std::string, std::string>& entries() const { return map_; }

private:
    std::unordered_map<std::string, std::string> map_;
};

// The Chinese catalogue compiled into the binary (parsed once, on first use).
const Catalog& zh_catalog();

// "zh" or "en" (the value of --lang or INFERLAB_LANG); anything else is an InputError naming `where`.
Lang parse_lang(const std::string& where, const std::string& value);
// A POSIX locale name: "zh" or "zh_*" (zh_CN.UTF-8, zh_TW) is Chinese, anything else English.
Lang lang_of_locale(const std::string& locale);
// The language of a run: `lang_flag` (--lang) when given; else INFERLAB_LANG; else the first of
// LC_ALL, LC_MESSAGES, LANG that is set and not empty (POSIX precedence); else English.
// `getenv` is std::getenv in the binary and a table in the tests.
Lang choose_language(const std::optional<std::string>& lang_flag,
                     const std::function<const char*(const char*)>& getenv);
// The value of `flag` in argv ("--flag v" or "--flag=v"; the last one given), before any option
// parser runs (the CLI reads --lang so, to build --help pages in that language). Words after "--"
// are not options; a flag without a value gives "".
std::optional<std::string> flag_value_of(const std::string& flag, int argc, const char* const* argv);

// The language tr() translates into; English until set (each run of the CLI sets it).
void set_language(Lang lang);
Lang language();

// `msgid` in the current language: the catalogue's msgstr in Chinese, else msgid itself.
std::string tr(const std::string& msgid);
// `msgid` in the current language as `context` means it (the catalogue's msgctxt entry), else as
// tr(msgid) gives it: a context needs an entry only where its meaning differs.
std::string trc(const std::string& context, const std::string& msgid);
// `msgid` as a text in `lang` says it: itself in English (what --json and --csv print in every
// language), the catalogue's msgstr in Chinese (msgid itself where the catalogue has none).
std::string tr_in(Lang lang, const std::string& msgid);
// Replaces {0}, {1}, ... in `pattern` by args[0], args[1], ...; "{{" and "}}" stand for braces.
// A placeholder with no argument is kept as written (never an exception at print time).
std::string substitute(std::string_view pattern, const std::vector<std::string>& args);
// tr() then substitute(), each argument formatted with fmt's "{}".
template <class... Args>
std::string trf(const std::string& msgid, const Args&... args) {
    return substitute(tr(msgid), {fmt::format("{}", args)...});
}

// A count with its noun: "1 token", "1,024 tokens". `one` and `many` are msgids with {0} for the
// count ("{0} token", "{0} tokens"), which is grouped in thousands. English picks the form by `n`;
// Chinese has no plural, so its text is the catalogue's form of `many` for every count (only
// `many` needs a catalogue entry). `lang` as for tr_in(); language() by default.
std::string counted(std::uint64_t n, const std::string& one, const std::string& many, Lang lang = language());

// A sentence of a result, kept as an English msgid with its values apart (paged's events, a
// pitfall's derivation, the config reader's rules). JSON prints text(), the same English in every
// language; the text printer prints localized(), the msgid through the catalogue with the same
// values. A clause that is a sentence of its own (the tied-head rule inside the weights' origin)
// is a Prose too, said in the same language as the sentence around it.
//
//   Prose p{N_("seq {0} admitted"), {"1"}};
//   p.text();       // "seq 1 admitted"
//   p.localized();  // "序列 1 被接纳" under --lang zh
//   Prose w{N_("{0} parameters ({1})"), {"8"}, {}, {Prose{N_("tie_word_embeddings true in the config"), {}}}};
struct Prose {
    std::string msgid;               // English, marked N_ where it is written
    std::vector<std::string> args;   // {0}, {1}, ...: numbers, names and token lists, never translated
    std::vector<std::size_t> msgid_args = {};  // indexes of args that are msgids themselves (translated too)
    std::vector<Prose> clauses = {};  // the placeholders after args: {args.size()}, {args.size() + 1}, ...

    bool empty() const { return msgid.empty(); }
    // The sentence in English ("{{" and "}}" in the msgid print as braces, values or none).
    std::string text() const { return in(Lang::en); }
    std::string localized() const { return in(language()); }
    // text() for Lang::en, localized() otherwise.
    std::string in(Lang lang) const;
};

// "a", "a and b", "a, b and c" (values, never translated) as a sentence: "and" and the commas
// in the reader's language when it is printed.
Prose and_list(const std::vector<std::string>& items);

// Each sentence's text(): the English a JSON document holds.
std::vector<std::string> texts(const std::vector<Prose>& v);

}  // namespace inferlab
