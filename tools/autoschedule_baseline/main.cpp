// autoschedule_baseline: Halide 14's own autoschedulers (Adams2019, Li2018, Mullapudi2016, the
// plugins Debian ships) on the project's phase algorithm, timed beside deconv's own plan for the
// same layers, as a one-off baseline (docs/performance.md, "Halide autoschedulers as a
// baseline"; docs/tuning.md says how to rerun it).
//
// The parent process runs every (layer, contender) measurement in a child of its own
// (isolated_run.h) and prints the tables; `--child LAYER CONTENDER --result FILE` is the
// child's side (measure.h).
#include "deconv/deconv.h"
#include "isolated_run.h"
#include "measure.h"
#include "suite_layer.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace deconv_asb {
namespace {

// A 3D layer (unet3d_up, vnet_up_3x3x3) can be added with --only when the build has rank-3 kernels.
const char *kDefaultLayers = "dcgan_l4,centernet_up3,unet_up1,ov_spec_2d,hifigan_up1";
const char *kDefaultContenders = "deconv,none,Mullapudi2016,Li2018,Adams2019";
// deconv's first (AVX-512) x86 variant, the one its kernels run on this project's machine
// (cmake/DeconvKernels.cmake). `host` would add avx512_sapphirerapids, which deconv avoids.
const char *kDefaultTarget = "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_skylake-f16c-fma-sse41";

struct Options {
    std::string suite = DECONV_ASB_DEFAULT_SUITE;
    std::string layers = kDefaultLayers;
    std::string contenders = kDefaultContenders;
    std::string plugin_dir = DECONV_ASB_PLUGIN_DIR;
    std::string target = kDefaultTarget;
    std::string schedules_dir;
    std::string work_dir = "autoschedule_baseline.out";
    int threads = 2;
    int repeats = 15;
    double budget_s = 30;  // per measurement; slower contenders keep at least 3 runs
    double timeout_s = 900;
    double mem_gib = 16;
    double balance = 40;       // MachineParams::generic()'s
    long long llc_bytes = 0;   // 0: this machine's last-level cache (sysfs)
    // Child side.
    std::string child_layer, child_contender, result_path;
};

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

const char *kUsage =
    "usage: autoschedule_baseline [--suite FILE] [--only L1,L2] [--contenders deconv,none,Mullapudi2016,Li2018,Adams2019]\n"
    "         [--threads 2] [--repeats 15] [--budget-s 30] [--timeout-s 900] [--mem-gib 16] [--target HALIDE_TARGET]\n"
    "         [--llc-bytes N] [--balance 40] [--plugin-dir DIR] [--work-dir DIR]\n"
    "Times each layer (f32, channels first) with deconv's plan and with the phase algorithm\n"
    "scheduled by Halide's default and by each autoscheduler, each in a child process.\n"
    "HL_BEAM_SIZE etc. pass through to Adams2019. Logs and generated schedules go to --work-dir.\n";

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--suite") o.suite = value();
        else if (a == "--only") o.layers = value();
        else if (a == "--contenders") o.contenders = value();
        else if (a == "--plugin-dir") o.plugin_dir = value();
        else if (a == "--target") o.target = value();
        else if (a == "--work-dir") o.work_dir = value();
        else if (a == "--threads") o.threads = std::stoi(value());
        else if (a == "--repeats") o.repeats = std::stoi(value());
        else if (a == "--budget-s") o.budget_s = std::stod(value());
        else if (a == "--timeout-s") o.timeout_s = std::stod(value());
        else if (a == "--mem-gib") o.mem_gib = std::stod(value());
        else if (a == "--balance") o.balance = std::stod(value());
        else if (a == "--llc-bytes") o.llc_bytes = std::stoll(value());
        else if (a == "--result") o.result_path = value();
        else if (a == "--child") {
            o.child_layer = value();
            o.child_contender = value();
        } else if (a == "--help" || a == "-h") {
            std::cout << kUsage;
            std::exit(0);
        } else {
            throw std::runtime_error("unknown argument " + a + "\n" + kUsage);
        }
    }
    if (o.threads < 1 || o.repeats < 1) throw std::runtime_error("--threads and --repeats must be at least 1");
    return o;
}

// The last-level cache of CPU 0 in bytes (sysfs "32768K"), else Halide's generic 16 MiB.
long long machine_llc_bytes() {
    for (int index = 4; index >= 0; index--) {
        std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
        std::string s;
        if (!(f >> s) || s.empty()) continue;
        long long v = std::atoll(s.c_str());
        if (s.back() == 'K') v *= 1024;
        if (s.back() == 'M') v *= 1024 * 1024;
        if (v > 0) return v;
    }
    return 16ll * 1024 * 1024;
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

MeasureOptions measure_options(const Options &o) {
    MeasureOptions m;
    m.threads = o.threads;
    m.plugin_dir = o.plugin_dir;
    m.target = Halide::Target(o.target);
    m.machine = Halide::MachineParams(o.threads, (uint64_t)(o.llc_bytes ? o.llc_bytes : machine_llc_bytes()),
                                      (float)o.balance);
    m.timing.repeats = o.repeats;
    m.timing.budget_s = o.budget_s;
    m.schedules_dir = o.work_dir;
    return m;
}

// The child: one measurement, written as "key<TAB>value" lines.
int run_child(const Options &o) {
    const SuiteLayer layer = read_suite_layers(o.suite, {o.child_layer}).at(0);
    std::ofstream out(o.result_path);
    Measurement m;
    try {
        m = measure(layer, o.child_contender, measure_options(o));
    } catch (const std::exception &e) {
        m.ok = false;
        m.error = e.what();
    }
    std::string error = m.error;
    for (char &c : error)
        if (c == '\n' || c == '\t') c = ' ';
    out << "ok\t" << (m.ok ? 1 : 0) << "\nerror\t" << error << "\nmedian_ms\t" << m.timing.median_ms << "\nmin_ms\t"
        << m.timing.min_ms << "\nruns\t" << m.timing.runs << "\nschedule_s\t" << m.schedule_s << "\ncompile_s\t"
        << m.compile_s << "\npipelines\t" << m.pipelines << "\ncalls\t" << m.calls << "\nmax_err\t" << m.max_err
        << "\nplan\t" << m.plan << "\n";
    return 0;
}

struct Row {
    bool ok = false;
    std::map<std::string, std::string> f;
    std::string failure;  // the error text, or how the child ended and its log's tail
};

Row parse_outcome(const ChildOutcome &c) {
    Row r;
    std::stringstream in(c.result);
    for (std::string line; std::getline(in, line);) {
        const size_t tab = line.find('\t');
        if (tab != std::string::npos) r.f[line.substr(0, tab)] = line.substr(tab + 1);
    }
    r.ok = c.exited_zero && r.f["ok"] == "1";
    if (!r.ok) {
        r.failure = !r.f["error"].empty() ? r.f["error"] : c.how;
        if (!c.exited_zero) r.failure = c.how + "; log tail: " + c.log_tail;
    }
    return r;
}

std::string fmt(const char *f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

int run_parent(const Options &o, int argc, char **argv) {
    const std::vector<std::string> layer_names = split(o.layers), contenders = split(o.contenders);
    const std::vector<SuiteLayer> layers = read_suite_layers(o.suite, layer_names);  // fail early
    if (std::system(("mkdir -p '" + o.work_dir + "'").c_str()) != 0)
        throw std::runtime_error("cannot create " + o.work_dir);

    std::string command = "autoschedule_baseline";
    for (int i = 1; i < argc; i++) command += std::string(" ") + argv[i];
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    const MeasureOptions mo = measure_options(o);
    const char *beam = std::getenv("HL_BEAM_SIZE");
    std::cout << "date: " << date << "\ncpu: " << cpu_model() << " (" << deconv::cpu_variant()
              << " variant of deconv's kernels)\nthreads: " << o.threads << " (deconv::set_cpu_threads, HL_NUM_THREADS)\n"
              << "halide target: " << o.target << "\nmachine params: " << mo.machine.to_string()
              << "\nHL_BEAM_SIZE: " << (beam ? beam : "unset (Adams2019's default, 32)") << "\ncommand: " << command
              << "\n\n";

    std::vector<std::string> forward = {"--suite", o.suite,          "--plugin-dir", o.plugin_dir,
                                        "--target", o.target,        "--work-dir",   o.work_dir,
                                        "--threads", std::to_string(o.threads), "--repeats", std::to_string(o.repeats),
                                        "--budget-s", fmt("%g", o.budget_s),
                                        "--balance", fmt("%g", o.balance),
                                        "--llc-bytes", std::to_string(o.llc_bytes ? o.llc_bytes : machine_llc_bytes())};
    std::map<std::pair<std::string, std::string>, Row> rows;
    for (const SuiteLayer &l : layers) {
        for (const std::string &c : contenders) {
            std::vector<std::string> args = forward;
            args.insert(args.end(), {"--child", l.name, c});
            std::cerr << "[autoschedule_baseline] " << l.name << " / " << c << " ..." << std::flush;
            const Row r = parse_outcome(run_isolated(args, o.timeout_s, o.mem_gib, o.work_dir + "/" + l.name + "." + c + ".log"));
            std::cerr << (r.ok ? " " + r.f.at("median_ms") + " ms" : " FAILED: " + r.failure) << "\n";
            rows[{l.name, c}] = r;
        }
    }

    auto ms = [&](const std::string &l, const std::string &c) -> std::string {
        const Row &r = rows[{l, c}];
        if (!r.ok) return "failed";
        return fmt("%.3f", std::stod(r.f.at("median_ms")));
    };
    std::cout << "| layer |";
    for (const std::string &c : contenders) std::cout << " " << c << " ms |";
    std::cout << " best autoscheduler / deconv | autoschedule s |\n|---|";
    for (size_t i = 0; i < contenders.size(); i++) std::cout << "---:|";
    std::cout << "---:|---|\n";
    for (const SuiteLayer &l : layers) {
        std::cout << "| " << l.name << " |";
        for (const std::string &c : contenders) std::cout << " " << ms(l.name, c) << " |";
        double best = 0;
        std::string best_name, sched;
        for (const std::string &c : contenders) {
            const Row &r = rows[{l.name, c}];
            if (c == "deconv" || c == "none") continue;
            if (!sched.empty()) sched += ", ";
            sched += c.substr(0, 1) + " " + (r.f.count("schedule_s") && !r.f.at("schedule_s").empty()
                                                 ? fmt("%.1f", std::stod(r.f.at("schedule_s")))
                                                 : "-");
            if (r.ok && (best == 0 || std::stod(r.f.at("median_ms")) < best)) {
                best = std::stod(r.f.at("median_ms"));
                best_name = c;
            }
        }
        const Row &d = rows[{l.name, "deconv"}];
        if (best > 0 && d.ok)
            std::cout << " " << fmt("%.1fx", best / std::stod(d.f.at("median_ms"))) << " (" << best_name << ") |";
        else
            std::cout << " - |";
        std::cout << " " << sched << " |\n";
    }

    std::cout << "\n| layer | contender | median ms | min ms | runs | schedule s | JIT compile s | pipelines | calls/run | max rel err | note |\n"
                 "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const SuiteLayer &l : layers) {
        for (const std::string &c : contenders) {
            Row &r = rows[{l.name, c}];
            auto f = [&](const char *k) { return r.f.count(k) ? r.f[k] : std::string("-"); };
            std::cout << "| " << l.name << " | " << c << " | " << (r.ok ? ms(l.name, c) : "failed") << " | "
                      << (r.ok ? fmt("%.3f", std::stod(f("min_ms"))) : "-") << " | " << f("runs") << " | "
                      << f("schedule_s") << " | " << f("compile_s") << " | " << f("pipelines") << " | " << f("calls")
                      << " | " << f("max_err") << " | " << (r.ok ? (c == "deconv" ? f("plan") : "") : r.failure)
                      << " |\n";
        }
    }
    return 0;
}

}  // namespace
}  // namespace deconv_asb

int main(int argc, char **argv) {
    // Halide's JIT thread pool reads HL_NUM_THREADS when it starts; set before any pipeline runs
    // (and inherited by the children).
    try {
        const deconv_asb::Options o = deconv_asb::parse(argc, argv);
        setenv("HL_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
        if (!o.child_layer.empty()) return deconv_asb::run_child(o);
        return deconv_asb::run_parent(o, argc, argv);
    } catch (const std::exception &e) {
        std::cerr << "autoschedule_baseline: " << e.what() << "\n";
        return 2;
    }
}
