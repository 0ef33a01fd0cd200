#include "problem_desc.h"

#include <cctype>
#include <cstring>

#include "errors.h"

namespace deconv_cli {

namespace {

struct Field {
    const char *key;
    int64_t ProblemDesc::*scalar;           // g, mb, ic, oc
    std::array<int64_t, 3> ProblemDesc::*arr;  // spatial arrays
    int axis;                               // 0 d, 1 h, 2 w
};

const Field kFields[] = {
    // Longer keys that share a prefix come first ("mb" before nothing, "id" before "i"...).
    {"mb", &ProblemDesc::mb, nullptr, -1},
    {"ic", &ProblemDesc::ic, nullptr, -1},
    {"oc", &ProblemDesc::oc, nullptr, -1},
    {"id", nullptr, &ProblemDesc::i, 0}, {"ih", nullptr, &ProblemDesc::i, 1}, {"iw", nullptr, &ProblemDesc::i, 2},
    {"od", nullptr, &ProblemDesc::o, 0}, {"oh", nullptr, &ProblemDesc::o, 1}, {"ow", nullptr, &ProblemDesc::o, 2},
    {"kd", nullptr, &ProblemDesc::k, 0}, {"kh", nullptr, &ProblemDesc::k, 1}, {"kw", nullptr, &ProblemDesc::k, 2},
    {"sd", nullptr, &ProblemDesc::s, 0}, {"sh", nullptr, &ProblemDesc::s, 1}, {"sw", nullptr, &ProblemDesc::s, 2},
    {"dd", nullptr, &ProblemDesc::d, 0}, {"dh", nullptr, &ProblemDesc::d, 1}, {"dw", nullptr, &ProblemDesc::d, 2},
    {"pd", nullptr, &ProblemDesc::p, 0}, {"ph", nullptr, &ProblemDesc::p, 1}, {"pw", nullptr, &ProblemDesc::p, 2},
    {"g", &ProblemDesc::g, nullptr, -1},
};

[[noreturn]] void bad(const std::string &text, const std::string &why) {
    throw UsageError("--desc '" + text + "': " + why);
}

// The largest value a field may have; deduced outputs and pads are held to it too, so that
// every descriptor format_problem_desc prints parses again, and the axis arithmetic below stays
// far inside 64 bits.
constexpr long long kMaxValue = 1ll << 40;

}  // namespace

ProblemDesc parse_problem_desc(const std::string &text) {
    ProblemDesc d;
    // "Not given" markers, as benchdnn: 0 for sizes, -1 for pads; s defaults to 1, d to 0.
    d.s = {1, 1, 1};
    d.p = {-1, -1, -1};
    bool seen_g = false, seen_ic = false, seen_oc = false;
    const char *s = text.c_str();
    if (!*s) bad(text, "is empty");
    while (*s) {
        if (*s == '_') {
            ++s;
            continue;
        }
        if (*s == 'n') {
            std::string name = s + 1;
            if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
                name = name.substr(1, name.size() - 2);
            d.name = name;
            break;
        }
        const Field *f = nullptr;
        for (const Field &cand : kFields)
            if (std::strncmp(s, cand.key, std::strlen(cand.key)) == 0) {
                f = &cand;
                break;
            }
        if (!f) bad(text, std::string("unknown field at '") + s + "'");
        s += std::strlen(f->key);
        if (!std::isdigit(static_cast<unsigned char>(*s)))
            bad(text, std::string("field '") + f->key + "' has no value (a non-negative integer)");
        char *end = nullptr;
        errno = 0;
        const long long v = std::strtoll(s, &end, 10);
        if (errno == ERANGE || v > kMaxValue)
            bad(text, std::string("field '") + f->key + "' value is too large");
        s = end;
        if (f->scalar) {
            d.*(f->scalar) = v;
            if (f->scalar == &ProblemDesc::g) seen_g = true;
            if (f->scalar == &ProblemDesc::ic) seen_ic = true;
            if (f->scalar == &ProblemDesc::oc) seen_oc = true;
        } else {
            (d.*(f->arr))[f->axis] = v;
        }
    }

    if (seen_g) {
        if (d.g <= 0) bad(text, "g is 0; it must be at least 1");
        d.has_groups = true;
    }
    if (!seen_ic || d.ic <= 0) bad(text, "ic (total input channels) is missing or 0");
    if (!seen_oc || d.oc <= 0) bad(text, "oc (total output channels) is missing or 0");
    if (d.mb < 0) bad(text, "mb is negative");
    for (int a = 0; a < 3; ++a)
        if (d.s[a] <= 0) bad(text, std::string("s") + "dhw"[a] + " is 0; strides must be at least 1");
    if (d.ic % d.g != 0)
        bad(text, "ic=" + std::to_string(d.ic) + " is not divisible by g=" + std::to_string(d.g) +
                      " (ic is the total input channel count)");
    if (d.oc % d.g != 0)
        bad(text, "oc=" + std::to_string(d.oc) + " is not divisible by g=" + std::to_string(d.g) +
                      " (oc is the total output channel count)");

    // Which axes are mentioned at all (benchdnn: any size, a stride other than 1, a pad >= 1).
    std::array<bool, 3> present{};
    for (int a = 0; a < 3; ++a)
        present[a] = (d.i[a] | d.k[a] | d.o[a] | d.d[a]) != 0 || d.s[a] != 1 || d.p[a] >= 1;

    auto out_of = [](int64_t i, int64_t k, int64_t st, int64_t p, int64_t dl) {
        return (i - 1) * st + (k - 1) * (dl + 1) - 2 * p + 1;
    };
    auto pad_of = [](int64_t o, int64_t i, int64_t k, int64_t st, int64_t dl) {
        return ((i - 1) * st - o + ((k - 1) * (dl + 1) + 1)) / 2;
    };
    static const char *axis_name = "dhw";
    for (int a = 0; a < 3; ++a) {
        if (!present[a]) continue;
        const std::string ax(1, axis_name[a]);
        if (d.i[a] <= 0) bad(text, "i" + ax + " is missing or 0 while other " + ax + " fields are given");
        if (d.k[a] <= 0) bad(text, "k" + ax + " is missing or 0 while other " + ax + " fields are given");
        // (i-1)*s and (k-1)*(d+1) each within the limit: the sums below then fit easily.
        int64_t span = 0;
        if (__builtin_mul_overflow(d.i[a] - 1, d.s[a], &span) || span > kMaxValue ||
            __builtin_mul_overflow(d.k[a] - 1, d.d[a] + 1, &span) || span > kMaxValue)
            bad(text, "i" + ax + ", s" + ax + ", k" + ax + " and d" + ax + " give an output longer than 2^40");
        if (d.o[a] == 0) {
            if (d.p[a] < 0) d.p[a] = 0;
            d.o[a] = out_of(d.i[a], d.k[a], d.s[a], d.p[a], d.d[a]);
            if (d.o[a] <= 0 || d.o[a] > kMaxValue)
                bad(text, "the deduced o" + ax + " = (i-1)*s + (k-1)*(d+1) - 2p + 1 = " +
                              std::to_string(d.o[a]) + (d.o[a] <= 0 ? " is not positive" : " is too large"));
        } else if (d.p[a] < 0) {
            d.p[a] = pad_of(d.o[a], d.i[a], d.k[a], d.s[a], d.d[a]);
        }
    }

    // Rank from the deepest axis with an output, then benchdnn's propagation.
    const bool no_d = d.o[0] == 0, no_h = d.o[1] == 0, no_w = d.o[2] == 0;
    int ndims = 5;
    if (no_d) --ndims;
    if (no_d && no_h) --ndims;
    if (no_d && no_h && no_w) --ndims;
    if (ndims <= 2) bad(text, "no spatial axis is given (need at least iw/ih/id and its kernel size)");
    auto copy_axis = [&](int from, int to) {
        d.i[to] = d.i[from], d.o[to] = d.o[from], d.k[to] = d.k[from];
        d.s[to] = d.s[from], d.d[to] = d.d[from], d.p[to] = d.p[from];
    };
    if (ndims == 5) {
        if (no_h && no_w) {
            copy_axis(0, 1);
            copy_axis(0, 2);
        } else if (no_h || no_w) {
            bad(text, "a 3D problem needs both the h and w fields or neither");
        }
    } else if (ndims == 4 && no_w) {
        copy_axis(1, 2);
    }
    d.spatial_rank = ndims - 2;
    for (int a = 0; a < 3; ++a) {
        if (a < 3 - d.spatial_rank) {  // unused leading axes take neutral values
            d.i[a] = d.o[a] = d.k[a] = d.s[a] = 1;
            d.d[a] = d.p[a] = 0;
        }
        if (d.p[a] < 0) d.p[a] = 0;
        d.pr[a] = (d.i[a] - 1) * d.s[a] + (d.k[a] - 1) * (d.d[a] + 1) + 1 - d.o[a] - d.p[a];
    }
    return d;
}

std::string format_problem_desc(const ProblemDesc &d) {
    bool cubic = true, square = true;
    for (const auto *arr : {&d.i, &d.o, &d.k, &d.s, &d.d, &d.p}) {
        cubic = cubic && (*arr)[0] == (*arr)[1] && (*arr)[1] == (*arr)[2];
        square = square && (*arr)[1] == (*arr)[2];
    }
    const bool pd = d.spatial_rank == 3;
    const bool ph = d.spatial_rank == 2 || (d.spatial_rank == 3 && !cubic);
    const bool pw = d.spatial_rank == 1 || (d.spatial_rank == 3 && !cubic) || (d.spatial_rank == 2 && !square);
    std::string s;
    auto spatial = [&](const char *prefix, const std::array<int64_t, 3> &v) {
        if (pd) s += std::string(prefix) + "d" + std::to_string(v[0]);
        if (ph) s += std::string(prefix) + "h" + std::to_string(v[1]);
        if (pw) s += std::string(prefix) + "w" + std::to_string(v[2]);
    };
    if (d.has_groups) s += "g" + std::to_string(d.g);
    if (d.mb != 2) s += "mb" + std::to_string(d.mb);
    s += "ic" + std::to_string(d.ic);
    spatial("i", d.i);
    s += "oc" + std::to_string(d.oc);
    spatial("o", d.o);
    spatial("k", d.k);
    if (d.s[0] != 1 || d.s[1] != 1 || d.s[2] != 1) spatial("s", d.s);
    spatial("p", d.p);
    if (d.d[0] != 0 || d.d[1] != 0 || d.d[2] != 0) spatial("d", d.d);
    if (!d.name.empty()) s += "n" + d.name;
    return s;
}

LayerSpec problem_desc_to_layer(const ProblemDesc &d) {
    LayerSpec l;
    l.name = d.name;
    l.origin = "descriptor '" + format_problem_desc(d) + "'";
    l.op = d.has_groups ? deconv::Op::GroupConvolutionBackpropData
                        : deconv::Op::ConvolutionBackpropData;
    l.input_shape = {d.mb, d.ic};
    if (d.has_groups) l.filter_shape = {d.g, d.ic / d.g, d.oc / d.g};
    else l.filter_shape = {d.ic, d.oc};
    bool any_negative_pr = false;
    for (int a = 3 - d.spatial_rank; a < 3; ++a) {
        l.input_shape.push_back(d.i[a]);
        l.filter_shape.push_back(d.k[a]);
        l.attrs.strides.push_back(d.s[a]);
        l.attrs.dilations.push_back(d.d[a] + 1);
        l.attrs.pads_begin.push_back(d.p[a]);
        l.attrs.pads_end.push_back(d.pr[a] < 0 ? 0 : d.pr[a]);
        l.attrs.output_padding.push_back(d.pr[a] < 0 ? -d.pr[a] : 0);
        any_negative_pr = any_negative_pr || d.pr[a] < 0;
    }
    if (!any_negative_pr) l.attrs.output_padding.clear();
    l.declared_output = {d.mb, d.oc};
    for (int a = 3 - d.spatial_rank; a < 3; ++a) l.declared_output.push_back(d.o[a]);
    return l;
}

}  // namespace deconv_cli
