// deconv: the command line of the deconv library. Subcommands run, infer-shape and bench; see
// `deconv --help` and `deconv COMMAND --help`.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

#include "commands.h"
#include "errors.h"
#include "onednn_baseline.h"

namespace {

using namespace deconv_cli;

// One line: newlines become "; ", trailing space trimmed.
std::string one_line(std::string s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\n' || s[i] == '\r') {
            while (!out.empty() && out.back() == ' ') out.pop_back();
            if (!out.empty() && i + 1 < s.size()) out += "; ";
        } else {
            out.push_back(s[i]);
        }
    }
    while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
    return out;
}

int fail(int code, const std::string &message) {
    std::fflush(stdout);
    std::cerr << "error: " << one_line(message) << std::endl;
    return code;
}

const char *kOverview =
    "deconv: OpenVINO GroupConvolutionBackpropData-1 and ConvolutionBackpropData-1 (transposed "
    "convolution), GroupConvolution-1 (forward) and oneDNN Graph ConvolutionBackwardData with "
    "ahead-of-time compiled Halide kernels.";

const char *kFooter =
    "Ops (--op): group_convolution_backprop_data (the default; convolution_backprop_data when the "
    "filter's rank equals the data's), convolution_backprop_data, group_convolution, "
    "convolution_backward_data.\n"
    "Layouts: data [N, G*C_in, X1..XD] (ncx) or [N, X1..XD, G*C_in] (--data-format nxc), output "
    "[N, G*C_out, Y1..YD] likewise; D = 1, 2 or 3. Filters: [G, C_in, C_out, K1..KD] "
    "(group_convolution_backprop_data), [C_in, C_out, K1..KD] (convolution_backprop_data), "
    "[G, C_out, C_in, K1..KD] (group_convolution), xio [K1..KD, IC/G, OC] or oix "
    "[OC, IC/G, K1..KD] (convolution_backward_data: diff_dst [N, OC, X..] -> diff_src "
    "[N, IC, Y..], --groups G; defaults nxc, xio, groups 1).\n"
    "Exit codes: 0 success; 1 a bad flag, value, shape, attribute or dtype; 2 a file that cannot "
    "be read, written or parsed (.npy, XML, JSON); 3 an internal or kernel failure. Every error "
    "is one line on stderr starting with 'error:', and no output file is left behind.";

const char *kRunFooter =
    "X.npy is the op's input (diff_dst for convolution_backward_data) in the data format: "
    "[N, C, X1..XD] (ncx) or [N, X1..XD, C] (nxc); W.npy is the filter in the op's layout (see "
    "deconv --help); Y.npy (diff_src for convolution_backward_data) gets the data format and "
    "X's dtype.\n"
    ".npy files must be little-endian and C order, with dtype <f4 (f32), <f2 (f16), <f8 (f64), "
    "|i1 (i8), |u1 (u8) or <i4 (i32).\n"
    "--dtype sets the compute type; X and W are converted to it when their dtype differs "
    "(floats round to nearest even; integers round and saturate), and Y is converted back to "
    "X's dtype. Without --dtype, X and W must have the same dtype.\n"
    "bf16 has no .npy type: with --dtype bf16, X, W and Y are float32 files and X and W are "
    "rounded to bf16 (nearest even) before the computation; Y holds bf16 values.\n"
    "--data-format nxc (alias --layout nxc) runs the library's channels-last kernels on the "
    "files as they are (no transposed copies).\n"
    "--target cuda runs the layer on the library's CUDA kernels (an NVIDIA driver and GPU are "
    "needed at run time; X and W are copied to the GPU and Y back, included in --verbose's "
    "time). Without a usable GPU, or for a dtype with no CUDA kernel (bf16), it fails with one "
    "error line (exit 1) unless --cpu-fallback is given: the layer then runs on the CPU and a "
    "note on stderr says so.\n"
    "--random fills X and W (those not given as .npy) with seeded small integers (-3..3; 0..5 "
    "for u8), exact in every dtype; shapes then come from --layer, --desc or --input-shape/"
    "--filter-shape. Without --output it prints the output's shape, min, max and sum.\n"
    "Quantized layers and epilogues (include/deconv/deconv.h, \"quantization and epilogues\"): --cfg u8s8u8 "
    "(or --src-dtype/--wei-dtype/--dst-dtype) runs u8 or i8 data with i8 weights, accumulating in i32, then "
    "v = scale[c] * (acc + bias[c]), the --post-ops in order, + --dst-zp, rounded and saturated to the dst "
    "dtype; --src-zp is subtracted from every data element a tap reads. X and W are converted to the src and "
    "weights dtypes when their files differ (rounding and saturating), and Y gets the dst dtype (bf16: "
    "float32 file). --bias DTYPE adds a seeded random bias (integers -32..32; --save-bias writes it), --bias "
    "B.npy a given one. A sum post-op adds the output's earlier contents: zeros, or --dst-init Y0.npy.\n"
    "Examples:\n"
    "  deconv run -x X.npy -w W.npy -o Y.npy --cfg u8s8u8 --oscale per_oc:0.25 --src-zp 3 --post-ops relu "
    "--strides 2,2\n"
    "  deconv run --input X.npy --filter W.npy --output Y.npy --strides 2,2 --pads-begin 1,1 "
    "--pads-end 1,1\n"
    "  deconv run --layer layer.xml --random --seed 7 --output Y.npy --save-input X.npy "
    "--save-filter W.npy\n"
    "  deconv run --op convolution_backward_data --input DIFF_DST.npy --filter W.npy --output "
    "DIFF_SRC.npy --groups 2 --data-format ncx --weights-format oix --strides 2,2 --dst-shape "
    "1,8,12,12\n"
    "  deconv run --op group_convolution -x X.npy -w W.npy -o Y.npy --pads-begin 2 --pads-end 2";

const char *kInferFooter =
    "Prints the output shape, e.g. 1,8,447,447. With --verbose, also the resolved attributes and "
    "the effective pads (after auto_pad and output_shape).\n"
    "--desc takes a benchdnn descriptor; benchdnn counts dilation from 0 (dh1 = OpenVINO "
    "dilation 2), and ic/oc are total channel counts.\n"
    "Examples:\n"
    "  deconv infer-shape --input-shape 1,20,224,224 --filter-shape 4,5,2,3,3 --strides 2,2 "
    "--pads-begin 1,1 --pads-end 1,1\n"
    "  deconv infer-shape --desc g4mb1ic20ih224oc8oh447kh3sh2ph1\n"
    "  deconv infer-shape --layer model.xml --layer-name upsampling_node --verbose\n"
    "  deconv infer-shape --op convolution_backward_data --input-shape 1,7,7,16 --filter-shape "
    "3,3,8,16 --strides 2,2 --dst-shape 1,14,14,8";

const char *kBenchFooter =
    "Times one layer (--layer, --desc or shape flags) or every layer of --suite (by default the "
    "source tree's bench/layers.json): a JSON file in the format of bench/layers.json (layers "
    "with \"scale\": true are left out unless "
    "--include-scale), or an OpenVINO IR .xml model (all its GroupConvolutionBackpropData, "
    "ConvolutionBackpropData and GroupConvolution layers).\n"
    "Per layer: --warmup runs (and at least --warmup-ms of them), then --repeats timed runs; prints the median and minimum ms, the "
    "spread ((max-min)/median), GFLOP/s = 2*MACs/time with the nominal MACs "
    "N*G*C_in*C_out*prod(X)*prod(K) (prod(Y), the output's, for group_convolution), and "
    "roofline % = max(2*MACs/peak_flops, (input+filter+output bytes)/peak_bandwidth) / time. The "
    "header names the CPU variant of the kernels that ran. With oneDNN (libdnnl-dev) in the "
    "build, oneDNN's deconvolution_forward (convolution_forward for group_convolution) is timed "
    "on the same data in the same run (plain layouts and format_tag::any, reorders "
    "excluded, the faster reported; bf16/f16 in that dtype when oneDNN accepts it, else f32) "
    "and speedup = oneDNN time / ours. Our filter is packed once before the timed runs "
    "(Plan::pack_filter, constant weights; --pack-per-run packs it in every run). A geomean row "
    "ends the table.\n"
    "--threads N sets HL_NUM_THREADS for our kernels and omp_set_num_threads for oneDNN (OpenMP) "
    "before either runs; without it both use every core (or OMP_NUM_THREADS / HL_NUM_THREADS "
    "from the environment). nxc layers (suite \"layout\": \"nxc\", or --data-format nxc for every "
    "layer) run our channels-last kernels (data_format NXC) and oneDNN with nwc/nhwc/ndhwc data. "
    "A suite entry's \"op\" picks the op (default GroupConvolutionBackpropData).\n"
    "--target cuda times our CUDA kernels (each run includes the host/device copies of X, W and "
    "Y); without a usable GPU it fails (exit 1) unless --cpu-fallback is given, which runs the "
    "layers on the CPU and says so. Layers whose dtype has no CUDA kernel are skipped (or run on "
    "the CPU with --cpu-fallback).\n"
    "Quantized layers and epilogues: --cfg u8s8u8 --oscale per_oc:0.25 --src-zp N --dst-zp N --bias f32|i32 "
    "--post-ops \"relu;sum:0.5\" (deconv run --help; suite entries may carry the same as fields \"cfg\", "
    "\"oscale\", \"src_zp\", \"dst_zp\", \"bias\", \"post_ops\"; flags apply to every layer and win over "
    "them). oneDNN then runs its own int8 deconvolution (u8/s8 data, s8 weights with format_tag::any, the "
    "same dst dtype, output scales, zero points, bias and post-ops as attributes), and outputs are compared "
    "(integer outputs: the largest difference is noted; oneDNN may round a tie the other way). Float layers "
    "with an epilogue time oneDNN twice: with the post-ops fused (its attributes) and plain followed by a "
    "separate vectorised bias/scale/eltwise pass inside the same timed run; the faster is reported and "
    "both noted.\n"
    "Examples:\n"
    "  deconv bench --only dcgan_l2,unet_up1 --cfg u8s8u8 --oscale per_oc:0.25 --post-ops relu --threads 2\n"
    "  deconv bench --only ov_spec_2d,dcgan_l5\n"
    "  deconv bench --desc g21mb1ic21ih64oc21oh512kh16sh8 --repeats 20 --json";

const char *kTuneFooter =
    "For each layer (a suite, by default bench/layers.json, or one layer from the flags): the "
    "untuned plan is made (heuristics only), then the dispatch policy's knobs are searched one at "
    "a time from it (docs/tuning.md); each candidate that runs differently is checked against "
    "the untuned plan's result on the layer's shapes and timed interleaved with the best so far; "
    "a knob changes only when a candidate wins by more than the measured noise, and the winner "
    "is kept only if it beats the untuned plan in a final interleaved round. Prints both times "
    "and the schedule; --out merges the results into a database that run, bench and the library "
    "consult (--schedules, DECONV_SCHEDULES, deconv::load_schedules).\n"
    "Examples:\n"
    "  deconv tune --suite bench/layers.json --out db.json\n"
    "  deconv bench --suite bench/layers.json --schedules db.json";

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{kOverview, "deconv"};
    app.set_version_flag("--version", std::string("deconv ") + deconv::version(),
                         "Print the library version and exit");
    app.require_subcommand(1);
    app.footer(kFooter);

    RunOptions run;
    CLI::App *run_cmd = app.add_subcommand("run", "Run one layer on .npy files (or random data) and write the result");
    run_cmd->add_option("--input,-x", run.input, "X.npy: the data")->type_name("X.npy")->group("Files");
    run_cmd->add_option("--filter,-w", run.filter, "W.npy: the filter")->type_name("W.npy")->group("Files");
    run_cmd->add_option("--output,-o", run.output, "Y.npy: the result (written whole or not at all)")->type_name("Y.npy")->group("Files");
    run_cmd->add_option("--save-input", run.save_input, "With --random: also write the generated X here")->type_name("FILE")->group("Files");
    run_cmd->add_option("--save-filter", run.save_filter, "With --random: also write the generated W here")->type_name("FILE")->group("Files");
    add_layer_options(*run_cmd, run.layer);
    add_quant_options(*run_cmd, run.layer, /*run=*/true);
    run_cmd->add_option("--dst-init", run.dst_init,
        "With a sum post-op: the output's earlier contents (a .npy of the output's shape; default zeros)")
        ->type_name("Y0.npy")->group("Files");
    run_cmd->add_option("--save-bias", run.save_bias, "With --bias DTYPE: also write the generated bias here")
        ->type_name("FILE")->group("Files");
    run.o_dtype = run_cmd->add_option("--dtype", run.dtype,
        "Compute type f32|f16|bf16|f64|i8|u8|i32 (default: X's dtype)")->type_name("TYPE")->group("Run");
    run_cmd->add_option("--target", run.target, "Device: cpu (default; alias host) or cuda")->type_name("cpu|cuda")->group("Run");
    run_cmd->add_flag("--cpu-fallback", run.cpu_fallback,
        "With --target cuda: run on the CPU (saying so on stderr) when CUDA cannot run the layer")->group("Run");
    run_cmd->add_flag("--random", run.random, "Fill X and W (when not given) with seeded random small integers")->group("Run");
    run_cmd->add_option("--seed", run.seed, "Seed for --random (default 1)")->type_name("N")->group("Run");
    run_cmd->add_flag("--verbose,-v", run.verbose, "Print the resolved layer and the time to stderr")->group("Run");
    run_cmd->add_option("--schedule", run.schedule, "Pins of the dispatch policy, e.g. \"cpu_variant=avx2 route=channels_last\" (docs/tuning.md; ExecOptions::schedule)")->type_name("KNOBS")->group("Run");
    run_cmd->add_option("--algorithm", run.algorithm, "Algorithm: direct (default: every product of the definition), winograd (fewer multiplications, a larger rounding error: docs/semantics.md), auto")->type_name("direct|winograd|auto")->group("Run");
    run_cmd->add_option("--schedules", run.schedules, "Schedule database to consult (deconv tune --out)")->type_name("DB.json")->group("Run");
    run_cmd->footer(kRunFooter);

    InferShapeOptions infer;
    CLI::App *infer_cmd = app.add_subcommand("infer-shape", "Print the output shape of a layer");
    add_layer_options(*infer_cmd, infer.layer);
    infer_cmd->add_flag("--verbose,-v", infer.verbose, "Also print the attributes and the effective pads");
    infer_cmd->footer(kInferFooter);

    BenchCommandOptions bench;
    CLI::App *bench_cmd = app.add_subcommand("bench", "Time layers, beside oneDNN when available");
    bench_cmd->add_option("--suite", bench.suite, "FILE.json (layers.json format) or an IR FILE.xml (default: bench/layers.json)")->type_name("FILE")->group("Bench");
    add_layer_options(*bench_cmd, bench.layer);
    add_quant_options(*bench_cmd, bench.layer, /*run=*/false);
    bench_cmd->add_option("--dtype", bench.dtype, "Compute type for every layer (default: the layer's, else f32)")->type_name("TYPE")->group("Bench");
    bench_cmd->add_option("--repeats", bench.bench.repeats, "Timed runs per layer (default 10)")->type_name("N")->group("Bench");
    bench_cmd->add_option("--warmup", bench.bench.warmup, "Untimed runs first (default 2)")->type_name("N")->group("Bench");
    bench_cmd->add_option("--warmup-ms", bench.bench.warmup_ms,
                          "...and untimed runs for at least this long (default 20): the other library's idle threads "
                          "stop spinning meanwhile")
        ->type_name("MS")
        ->group("Bench");
    bench_cmd->add_option("--threads", bench.bench.threads, "Threads for both libraries (default: all cores)")->type_name("N")->group("Bench");
    bench_cmd->add_option("--only", bench.only, "Comma-separated layer names to run (includes scale layers named)")->type_name("NAMES")->group("Bench")->check(NonEmptyList);
    bench_cmd->add_option("--max-seconds", bench.bench.budget_s,
        "Time budget per layer and library: slow layers get fewer runs (default 10; 0: none)")->type_name("S")->group("Bench");
    bench_cmd->add_flag("--verbose,-v", bench.bench.verbose, "A progress line per layer on stderr (a terminal always gets one)")->group("Bench");
    bench_cmd->add_flag("--include-scale", bench.bench.include_scale, "Also run layers marked \"scale\": true")->group("Bench");
    bench_cmd->add_flag("--no-onednn", bench.no_onednn, "Do not time oneDNN")->group("Bench");
    bench_cmd->add_option("--target", bench.target, "Device of our kernels: cpu (default; alias host) or cuda (oneDNN stays on the CPU)")->type_name("cpu|cuda")->group("Bench");
    bench_cmd->add_flag("--cpu-fallback", bench.cpu_fallback,
        "With --target cuda: run on the CPU (saying so) when CUDA cannot run a layer")->group("Bench");
    bench_cmd->add_flag("--pack-per-run", bench.bench.pack_per_run,
        "Pack the filter inside every timed run (default: once, Plan::pack_filter, as oneDNN's weights)")->group("Bench");
    bench_cmd->add_flag("--json", bench.bench.json, "Machine-readable output on stdout")->group("Bench");
    bench_cmd->add_flag("--plans", bench.bench.plans_only,
        "Print each layer's plan (name, tab, Plan::describe) and time nothing")->group("Bench");
    bench_cmd->add_option("--seed", bench.bench.seed, "Seed of the random data (default 1)")->type_name("N")->group("Bench");
    bench_cmd->add_option("--peak-gflops", bench.bench.peak_gflops,
        "Roofline compute peak (default: this CPU's FP32 FMA peak, measured with --threads threads; 380 for --target cuda)")
        ->type_name("X")
        ->check(CLI::Validator(
            [](std::string &v) {
                char *end = nullptr;
                const double x = std::strtod(v.c_str(), &end);
                return end && *end == '\0' && x > 0 ? std::string() : "must be a positive number, got '" + v + "'";
            },
            ""))
        ->group("Bench");
    bench_cmd->add_option("--peak-gbps", bench.bench.peak_gbps, "Roofline memory bandwidth, GB/s (default 41)")->type_name("X")->group("Bench");
    bench_cmd->add_option("--schedule", bench.schedule, "Pins of the dispatch policy, e.g. \"cpu_variant=avx2 route=channels_last\" (docs/tuning.md; ExecOptions::schedule)")->type_name("KNOBS")->group("Bench");
    bench_cmd->add_option("--algorithm", bench.algorithm, "Algorithm: direct (default: every product of the definition), winograd (fewer multiplications, a larger rounding error: docs/semantics.md), auto")->type_name("direct|winograd|auto")->group("Bench");
    bench_cmd->add_option("--schedules", bench.schedules, "Schedule database to consult (deconv tune --out)")->type_name("DB.json")->group("Bench");
    bench_cmd->footer(kBenchFooter);

    TuneCommandOptions tune;
    CLI::App *tune_cmd = app.add_subcommand("tune", "Tune the dispatch policy of layers on this machine into a schedule database");
    tune_cmd->add_option("--suite", tune.suite, "FILE.json (layers.json format) or an IR FILE.xml (default: bench/layers.json)")->type_name("FILE")->group("Tune");
    add_layer_options(*tune_cmd, tune.layer);
    add_quant_options(*tune_cmd, tune.layer, /*run=*/false);
    tune_cmd->add_option("--dtype", tune.dtype, "Compute type for every layer (default: the layer's, else f32)")->type_name("TYPE")->group("Tune");
    tune_cmd->add_option("--only", tune.only, "Comma-separated layer names to tune")->type_name("NAMES")->group("Tune")->check(NonEmptyList);
    tune_cmd->add_option("--threads", tune.threads, "Threads (default: all cores); entries are keyed by it")->type_name("N")->group("Tune");
    tune_cmd->add_option("--repeats", tune.repeats, "Timed samples per candidate and round (default 5)")->type_name("N")->group("Tune");
    tune_cmd->add_option("--max-seconds", tune.max_seconds, "Time budget per layer (default 20)")->type_name("S")->group("Tune");
    tune_cmd->add_flag("--include-scale", tune.include_scale, "Also tune layers marked \"scale\": true")->group("Tune");
    tune_cmd->add_option("--out", tune.out, "Schedule database to merge the results into (created if missing)")->type_name("DB.json")->group("Tune");
    tune_cmd->add_option("--algorithm", tune.algorithm,
        "direct (default) or auto: auto lets the search try the Winograd path (its larger rounding error allowed)")->type_name("direct|auto")->group("Tune");
    tune_cmd->add_option("--schedules", tune.schedules, "Schedule database to load first (checked like any other)")->type_name("DB.json")->group("Tune");
    tune_cmd->add_flag("--verbose,-v", tune.verbose, "Print each layer's untuned and tuned plan (Plan::describe) to stderr")->group("Tune");
    tune_cmd->footer(kTuneFooter);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion &e) {
        return app.exit(e);
    } catch (const CLI::RequiredError &e) {
        if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-')
            return fail(kExitUsage, std::string("unknown command '") + argv[1] +
                                        "'; expected run, infer-shape, bench or tune (see deconv --help)");
        if (app.get_subcommands().empty())
            return fail(kExitUsage, "no command given; expected run, infer-shape, bench or tune (see deconv --help)");
        return fail(kExitUsage, e.what());
    } catch (const CLI::ParseError &e) {
        std::string msg = e.what();
        return fail(kExitUsage, msg + " (see deconv --help)");
    }

    try {
        if (run_cmd->parsed()) return run_command(run);
        if (infer_cmd->parsed()) return infer_shape_command(infer);
        if (bench_cmd->parsed()) return bench_command(bench);
        if (tune_cmd->parsed()) return tune_command(tune);
        return fail(kExitUsage, "no command given; expected run, infer-shape, bench or tune");
    } catch (const UsageError &e) {
        return fail(kExitUsage, e.what());
    } catch (const IoError &e) {
        return fail(kExitIo, e.what());
    } catch (const deconv::Error &e) {
        return fail(e.kind() == deconv::ErrorKind::Kernel ? kExitInternal : kExitUsage, e.what());
    } catch (const std::bad_alloc &) {
        return fail(kExitInternal, "out of memory");
    } catch (const std::exception &e) {
        return fail(kExitInternal, e.what());
    } catch (...) {
        return fail(kExitInternal, "unknown failure");
    }
}
