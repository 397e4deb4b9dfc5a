// decode-roofline's drawings (draw/decode_roofline.hpp): each SVG parses, and the numbers drawn in
// it (data-value) are the result's, which are checked here against the documents' values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "../../support/svg_check.hpp"
#include "inferlab/draw/decode_roofline.hpp"
#include "inferlab/draw/svg.hpp"

using namespace inferlab;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {
// First document §2.1.3: W = 14 GB, M_KV = 1 GiB per request, β = 1 TB/s.
RooflineRequest doc_request(std::vector<std::uint64_t> batches) {
    RooflineRequest r;
    r.model.weight_bytes = 14000000000ULL;
    r.model.kv_bytes_per_request = 1ULL << 30;
    r.machine.bandwidth = 1e12;
    r.batches = std::move(batches);
    return r;
}
}  // namespace
// First document §2.1.3: 66.34 tokens/s at B = 1; 354.14 aggregate and 44.27 per request at B = 8.
TEST_CASE("plots: decode-roofline draws the document's tokens/s at B = 1 and 8 (first document 2.1.3)",
          "[unit][draw][textbook]") {
    const RooflineRequest req = doc_request({8, 1});  // asked out of order: drawn in increasing B
    const RooflineResult res = decode_roofline(req);
    const std::string s = plots::decode_roofline_svg(req, res);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(test::svg_title(s) == "decode-roofline: tokens/s against batch, and the roofline");
    const auto pts = test::svg_values(s, "point");
    REQUIRE(pts.size() == 4);  // aggregate at B = 1, 8, then per request at B = 1, 8
    // 1e-12 relative: one division of exact byte counts by β in double
    CHECK_THAT(pts[0], WithinRel(1 / 0.015073741824, 1e-12));
    CHECK_THAT(pts[1], WithinRel(8 / 0.022589934592, 1e-12));
    CHECK_THAT(pts[2], WithinRel(1 / 0.015073741824, 1e-12));
    CHECK_THAT(pts[3], WithinRel(1 / 0.022589934592, 1e-12));
    CHECK(std::round(pts[1] * 100) == 35414);  // the document's 354.14
    CHECK(std::round(pts[3] * 100) == 4427);   // and 44.27
    // No π: no roofline panel, no switching batch, and the figure says so.
    CHECK(test::svg_items(s, "marker").empty());
    CHECK_THAT(test::svg_all_text(s), Contains("no π: memory bound only") && Contains("first document §2.1.3"));
}

TEST_CASE("plots: decode-roofline with π adds the roofline chart, its ridge and the switching batch", "[unit][draw]") {
    // W = 2 GB of 10^9 parameters (2 FLOPs each per token), no KV: intensity B FLOP/B, so with
    // π/β = 1000 FLOP/B the two bounds tie at B = 1000 and compute takes over from B = 1001.
    RooflineRequest req;
    req.model.weight_bytes = 2000000000ULL;
    req.model.params = 1000000000ULL;
    req.model.kv_bytes_per_request = 0;
    req.machine = Machine{1e12, 1e15, std::nullopt};
    req.seq_lens = {1};
    req.batches = {1, 10, 100, 2000};
    const RooflineResult res = decode_roofline(req);
    REQUIRE(res.compute_bound_from_batch);
    const std::string s = plots::decode_roofline_svg(req, res);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto markers = test::svg_values(s, "marker");
    REQUIRE(markers.size() == 2);
    CHECK(markers[0] == static_cast<double>(*res.compute_bound_from_batch));
    CHECK(*res.compute_bound_from_batch == 1001);
    CHECK_THAT(markers[1], WithinRel(1000.0, 1e-15));  // π/β = 10^15 / 10^12, one division
    const auto pts = test::svg_values(s, "point");
    REQUIRE(pts.size() == 4 + 4 + 4);  // aggregate, per request, then the roofline's points
    for (std::size_t i = 0; i < 4; ++i) {
        INFO("B = " << req.batches[i]);
        CHECK(pts[i] == res.rows[i].aggregate_tokens_per_s);
        CHECK(pts[4 + i] == res.rows[i].per_request_tokens_per_s);
        // Memory-bound rows reach β·I = 10^12 · B FLOP/s; the compute-bound row, π.
        const double expected = std::min(1e15, 1e12 * static_cast<double>(req.batches[i]));
        CHECK_THAT(pts[8 + i], WithinRel(expected, 1e-12));  // 1e-12 relative: F/t in double
    }
    CHECK_THAT(test::svg_all_text(s), Contains("Roofline: arithmetic intensity against FLOP/s") &&
                                          Contains("ridge π/β = 1000 FLOP/B") && Contains("compute-bound from B = 1,001"));
}
