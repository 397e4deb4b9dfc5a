#pragma once
// Printers of `inferlab spec-accept`: text, --json, --csv and --explain of one SpecAcceptResult.
#include "common.hpp"
#include "inferlab/answer/spec_accept.hpp"

namespace inferlab::app {

// Every form of the result: text and explanation fitted to text_width(), the JSON document (every
// key present, null where its section was not computed), and the tables by name ("tokens",
// "round", "gamma", "simulation"); the first is the one the inputs were about (the simulation,
// else the γ sweep, else the scripted round, else the token table).
// With `draw`, Report::svg holds the figure too (plots::spec_accept_figure, for --svg).
Report spec_accept_report(const SpecAcceptResult& r, bool draw = false);

}  // namespace inferlab::app
