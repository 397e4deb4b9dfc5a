#include "inferlab/model/run/compare.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace inferlab::model {
namespace {

// |got − ref| of one cell, in double so that the difference itself is not rounded to float.
double cell_diff(float got, float ref) {
    const double e = std::fabs(static_cast<double>(got) - static_cast<double>(ref));
    return std::isnan(e) ? INFINITY : e;  // a NaN must not hide behind a comparison that is false
}

void require_same_shape(const char* who, Eigen::Index got_rows, Eigen::Index got_cols, Eigen::Index ref_rows,
                        Eigen::Index ref_cols) {
    if (got_rows != ref_rows || got_cols != ref_cols)
        throw std::invalid_argument(std::string(who) + ": shapes differ ([" + std::to_string(got_rows) + ", " +
                                    std::to_string(got_cols) + "] against [" + std::to_string(ref_rows) + ", " +
                                    std::to_string(ref_cols) + "])");
}

}  // namespace

double relative_scale(const MatrixRM& ref, Eigen::Index r) {
    return std::max(1.0, static_cast<double>(ref.row(r).cwiseAbs().maxCoeff()));
}

LogitsDiff compare_logits(const MatrixRM& got, const MatrixRM& ref) {
    require_same_shape("compare_logits", got.rows(), got.cols(), ref.rows(), ref.cols());
    LogitsDiff d;
    for (Eigen::Index r = 0; r < ref.rows(); ++r) {
        const double scale = relative_scale(ref, r);
        for (Eigen::Index c = 0; c < ref.cols(); ++c) {
            const double e = cell_diff(got(r, c), ref(r, c));
            if (e > d.max_abs) d.max_abs = e, d.abs_row = r, d.abs_col = c;
            if (e / scale > d.max_rel) d.max_rel = e / scale, d.rel_row = r, d.rel_col = c;
        }
    }
    return d;
}

std::vector<double> row_max_abs(const MatrixRM& got, const MatrixRM& ref) {
    require_same_shape("row_max_abs", got.rows(), got.cols(), ref.rows(), ref.cols());
    std::vector<double> out(static_cast<std::size_t>(ref.rows()), 0.0);
    for (Eigen::Index r = 0; r < ref.rows(); ++r)
        for (Eigen::Index c = 0; c < ref.cols(); ++c)
            out[std::size_t(r)] = std::max(out[std::size_t(r)], cell_diff(got(r, c), ref(r, c)));
    return out;
}

double max_abs_diff(const Eigen::Ref<const Eigen::VectorXf>& got, const Eigen::Ref<const Eigen::VectorXf>& ref) {
    require_same_shape("max_abs_diff", got.size(), 1, ref.size(), 1);
    double e = 0;
    for (Eigen::Index c = 0; c < ref.size(); ++c) e = std::max(e, cell_diff(got(c), ref(c)));
    return e;
}

}  // namespace inferlab::model
