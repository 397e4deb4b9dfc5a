#pragma once
// The equations a printed line states, evaluated: a check that no derivation on the screen is
// false. A line is cut into clauses (at "; ", ": ", "→", "≤", "≥", two spaces, and ", " outside
// parentheses), each clause into the sides of its "=" and "≈" signs. A side is evaluated when it is
// arithmetic on printed numbers only: digits grouped by commas (1,342,052,838,400), decimals and
// exponents, fractions, + − × · / ÷ ^, parentheses, min, max, ceil, floor, round, clip and sqrt, each
// number optionally followed by a unit (B, GB, GiB, TB/s, ms, µs, FLOP, TFLOP/s, token/s, %: read
// as its scale in bytes, seconds, FLOP or tokens). A side with a symbol (W, S_i) or words is
// not evaluated; prose after a number ("16384 B per layer") and a closing annotation in brackets
// are dropped (an equation inside the brackets is read on its own); a restatement in other units
// ("3.35 TB/s (3.35e+12 B/s)") is compared with its quantity. Each evaluated side is an
// interval: an integer is exact, a decimal stands for every value that rounds to it, and the
// arithmetic carries those bounds. Consecutive evaluated sides of one clause must overlap under
// "=", and under "≈" within 1% of their size.
//
// What the check cannot read is listed, not dropped: a side of an "=" or "≈" that names numbers
// in prose ("519 blocks of 5,505,024 B") or in a notation the reader does not know, beside a side
// that was evaluated, is an unchecked equation. Its pattern (each number written #) goes into
// EquationReport::unchecked, which a test compares with a list that can only shrink.
// A side that is a formula in symbols ("2·L·H_kv·d·b", "min(S, W)") is not an equation on numbers
// and is not listed.
#include <string>
#include <vector>

namespace inferlab::test {

struct EquationFinding {
    std::string line;    // the printed line
    std::string left;    // the two sides compared, as printed
    std::string right;
    double left_low, left_high, right_low, right_high;
    bool approximate;    // joined by ≈
};

struct EquationReport {
    std::size_t checked = 0;                 // pairs of sides evaluated and compared
    std::vector<EquationFinding> false_ones; // pairs that do not hold
    // The patterns of the equations that name numbers but could not be evaluated, each number
    // written '#' ("# blocks of # B = # GiB"), sorted, without repeats.
    std::vector<std::string> unchecked;
};

// Every equation in `text`, line by line.
EquationReport check_equations(const std::string& text);

// A printed quantity: every number of `text` with the scale of the unit after it (a decimal as
// the interval of the values that round to it), for checking a label against the value it names.
struct Quantity {
    double low, high;  // the number times its unit's scale
    double scale;      // the unit's scale (1 without a unit)
};
std::vector<Quantity> printed_quantities(const std::string& text);

// One finding as a sentence, for a failing test's message.
std::string describe(const EquationFinding& f);

}  // namespace inferlab::test
