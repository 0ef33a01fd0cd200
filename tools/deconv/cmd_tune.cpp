// `deconv tune`: tunes the dispatch policy of every layer of a suite (or of one layer) on this
// machine with deconv::tune_layer, prints the untuned and tuned times side by side and merges the
// winners into a schedule database (--out).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "deconv/tuning.h"
#include "errors.h"
#include "layer_selection.h"

namespace deconv_cli {

namespace {

// One line on a terminal, redrawn: "[ 3/25] unet_up1  channel_block  42%".
void show_progress(size_t index, size_t count, const std::string &name, double fraction, const std::string &what) {
    std::fprintf(stderr, "\r\033[K[%2zu/%zu] %-22s %-16s %3.0f%%", index + 1, count, name.c_str(), what.c_str(),
                 std::min(fraction, 1.0) * 100);
    std::fflush(stderr);
}

}  // namespace

void load_schedule_database(const std::string &path) {
    if (path.empty()) return;
    try {
        deconv::load_schedules(path);
    } catch (const deconv::Error &e) {
        throw IoError(std::string("--schedules: ") + e.what());
    }
}

int tune_command(TuneCommandOptions &o) {
    set_bench_threads(o.threads);
    if (o.threads < 0) throw UsageError("--threads " + std::to_string(o.threads) + ": must be at least 1");
    if (!(o.max_seconds > 0) || o.max_seconds > 1e6)
        throw UsageError("--max-seconds " + fmt("%g", o.max_seconds) + ": must be a positive number of seconds");
    if (o.repeats < 0 || o.repeats > 1000) throw UsageError("--repeats " + std::to_string(o.repeats) + ": must be 1 to 1000");
    const deconv::Algorithm algorithm = algorithm_option(o.algorithm);
    load_schedule_database(o.schedules);
    LayerSelection sel = select_layers(o.layer, o.suite, o.dtype);
    const std::vector<std::string> only = split_names(o.only);
    for (const std::string &name : only) {
        bool found = false;
        for (const LayerSpec &l : sel.layers) found = found || l.name == name;
        if (!found) throw UsageError("--only: no layer named '" + name + "' in " + sel.source);
    }
    std::vector<LayerSpec> layers;
    for (LayerSpec &l : sel.layers) {
        const bool named = std::find(only.begin(), only.end(), l.name) != only.end();
        if (only.empty() ? l.scale && !o.include_scale : !named) continue;
        settle_op(l);
        layers.push_back(l);
    }
    if (layers.empty()) throw UsageError("no layer to tune in " + sel.source);

    const bool terminal = isatty(fileno(stderr)) != 0;
    std::cout << "deconv tune: " << layers.size() << " layers of " << sel.source << " on " << deconv::cpu_variant()
              << ", " << deconv::cpu_threads() << " threads, at most " << fmt("%g", o.max_seconds) << " s each\n";
    std::printf("%-24s %-6s %12s %12s %8s %6s %6s %7s  %s\n", "layer", "dtype", "untuned ms", "tuned ms", "speedup",
                "tried", "wrong", "seconds", "schedule");
    double log_sum = 0, total_s = 0;
    int timed = 0;
    for (size_t i = 0; i < layers.size(); i++) {
        const LayerSpec &l = layers[i];
        const deconv::DType dtype = l.dtype.value_or(deconv::DType::f32);
        // A quantized layer or one with an epilogue (--cfg, --post-ops, ...): tuned with its types.
        const bool typed = l.quant.typed();
        const deconv::DataTypes types = layer_types(l);
        const std::string type_name = typed ? deconv::data_types_name(types) : deconv::dtype_name(dtype);
        deconv::TuneOptions t;
        t.algorithm = algorithm;
        t.max_seconds = o.max_seconds;
        t.repeats = o.repeats;
        if (terminal) {
            t.progress = [&](double f, const std::string &what) { show_progress(i, layers.size(), l.name, f, what); };
        }
        deconv::TuneResult r;
        try {
            if (typed) {
                const deconv::ShapeInfo shape =
                    deconv::infer_shape(l.op, l.input_shape, l.filter_shape, l.attrs, l.output_shape);
                r = deconv::tune_layer(l.op, types, l.input_shape, l.filter_shape, l.attrs, l.output_shape,
                                       layer_epilogue(l, output_channels(shape)), t);
            } else {
                r = deconv::tune_layer(l.op, dtype, l.input_shape, l.filter_shape, l.attrs, l.output_shape, t);
            }
        } catch (const deconv::Error &e) {
            if (terminal) std::fprintf(stderr, "\r\033[K");
            if (e.kind() != deconv::ErrorKind::Unsupported) rethrow_with_origin(e, l);
            std::printf("%-24s %-6s skipped: %s\n", l.name.c_str(), type_name.c_str(), e.what());
            continue;
        }
        if (terminal) std::fprintf(stderr, "\r\033[K");
        const double speedup = r.tuned_ms > 0 ? r.default_ms / r.tuned_ms : 1;
        std::printf("%-24s %-6s %12.4f %12.4f %7.2fx %6d %6d %7.1f  %s\n", l.name.c_str(), type_name.c_str(),
                    r.default_ms, r.tuned_ms, speedup, r.candidates, r.rejected, r.seconds,
                    r.schedule.empty() ? "(untuned plan kept)" : r.schedule.c_str());
        if (o.verbose) {
            std::cerr << "  untuned: " << r.default_description << "\n  tuned:   " << r.tuned_description << "\n";
        }
        std::fflush(stdout);
        log_sum += std::log(speedup);
        total_s += r.seconds;
        timed++;
        if (!o.out.empty()) {
            try {
                if (typed) {
                    deconv::save_schedule(o.out, l.op, types, l.input_shape, l.filter_shape, l.attrs, l.output_shape,
                                          r, l.name);
                } else {
                    deconv::save_schedule(o.out, l.op, dtype, l.input_shape, l.filter_shape, l.attrs, l.output_shape,
                                          r, l.name);
                }
            } catch (const deconv::Error &e) {
                throw IoError(std::string("--out: ") + e.what());
            }
        }
    }
    if (timed > 0) {
        std::printf("%-24s %-6s %12s %12s %7.2fx %6s %6s %7.1f\n", "geomean", "", "", "", std::exp(log_sum / timed), "",
                    "", total_s);
    }
    if (!o.out.empty()) std::cout << "schedules written to " << o.out << " (" << timed << " layers)\n";
    return kExitOk;
}

}  // namespace deconv_cli
