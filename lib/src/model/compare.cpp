#include "inferlab/model/compare.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace inferlab::model {

double relative_scale(const MatrixRM& ref, Eigen::Index r) {
    return std::max(1.0, static_cast<double>(ref.row(r).cwiseAbs().maxCoeff()));
}

LogitsDiff compare_logits(const MatrixRM& got, const MatrixRM& ref) {
    if (got.rows() != ref.rows() || got.cols() != ref.cols())
        throw std::invalid_argument("compare_logits: shapes differ ([" + std::to_string(got.rows()) + ", " +
                                    std::to_string(got.cols()) + "] against [" + std::to_string(ref.rows()) + ", " +
                                    std::to_string(ref.cols()) + "])");
    LogitsDiff d;
    for (Eigen::Index r = 0; r < ref.rows(); ++r) {
        const double scale = relative_scale(ref, r);
        for (Eigen::Index c = 0; c < ref.cols(); ++c) {
            double e = std::fabs(static_cast<double>(got(r, c)) - static_cast<double>(ref(r, c)));
            if (std::isnan(e)) e = INFINITY;  // a NaN must not hide behind a comparison that is false
            if (e > d.max_abs) d.max_abs = e, d.abs_row = r, d.abs_col = c;
            if (e / scale > d.max_rel) d.max_rel = e / scale, d.rel_row = r, d.rel_col = c;
        }
    }
    return d;
}

}  // namespace inferlab::model
