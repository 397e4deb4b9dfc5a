#pragma once
// The figures the figure checks read (issue #29): every drawn figure of the catalogue at the
// documents' inputs, figures at other inputs (the try-outs that found labels running into each
// other and off the page), and each subcommand's --svg. One table, read by the label checks
// (cli/test_figures_label_what_they_draw.cpp) and the layout checks (cli/test_figures_layout.cpp).
#include <string>
#include <vector>

namespace inferlab::test {

using Args = std::vector<std::string>;

// Subcommand runs that draw with --svg FILE (and print their JSON with --json).
std::vector<Args> svg_runs();

// Subcommand runs of the try-outs (the inputs that found the layout's faults), for the layout checks:
// decode-roofline at 300 batches of a model past its context, spec-accept at four tokens. (Not for
// the label checks, which read a whole number as exact: "ridge π/β = 153 FLOP/B" at 153.016 is the
// rounding decode-roofline's text prints too.)
std::vector<Args> tryout_svg_runs();

// `figure NAME` runs at inputs other than the documents' (the SVG on stdout).
std::vector<Args> figure_runs();

struct DrawnFigure {
    std::string command;  // "inferlab figure doc1-fig13 --p ...", for the failure message
    std::string svg;
};
// Every figure of the catalogue, every figure_runs(), svg_runs() and tryout_svg_runs(), each drawn with the
// language flag `lang` ("en" or "zh"); a run that fails fails the test case.
std::vector<DrawnFigure> figure_corpus(const std::string& lang);

}  // namespace inferlab::test
