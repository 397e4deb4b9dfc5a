#pragma once
// One comparison of two logit matrices, used wherever a path is checked against a reference:
// check-cache, the bench's dtype comparison, and the tests (llm.c's validate_result, once).
#include <Eigen/Core>
#include <vector>

#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

// How far `got` is from `ref` (both [rows, vocab]), and where.
//   max_abs: max over all cells of |got − ref|, at (abs_row, abs_col).
//   max_rel: max over rows r of max_c |got − ref| / max(1, max_c |ref(r, c)|), at (rel_row, rel_col):
//            each row relative to its own largest logit, so a tolerance reads "1e-5 of the position's
//            largest logit"; the floor of 1 keeps rows of near-zero logits from turning rounding into
//            a large ratio.
// Empty matrices compare as equal (every field 0).
struct LogitsDiff {
    double max_abs = 0;
    Eigen::Index abs_row = 0, abs_col = 0;
    double max_rel = 0;
    Eigen::Index rel_row = 0, rel_col = 0;
};
// std::invalid_argument when the shapes differ (a caller's bug, not the user's input).
LogitsDiff compare_logits(const MatrixRM& got, const MatrixRM& ref);
// The denominator of max_rel for row r: max(1, max_c |ref(r, c)|).
double relative_scale(const MatrixRM& ref, Eigen::Index r);

// The same absolute difference row by row, for tables that show every position: entry r is
// max_c |got(r, c) − ref(r, c)| (compare_logits' max_abs restricted to row r; NaN counts as inf).
// std::invalid_argument when the shapes differ.
std::vector<double> row_max_abs(const MatrixRM& got, const MatrixRM& ref);
// One position's logits [vocab] each, kept as vectors: max_c |got(c) − ref(c)| (NaN counts as inf).
// std::invalid_argument when the lengths differ.
double max_abs_diff(const Eigen::Ref<const Eigen::VectorXf>& got, const Eigen::Ref<const Eigen::VectorXf>& ref);

}  // namespace inferlab::model
