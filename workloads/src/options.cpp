#include "options.h"

#include "scenario.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace wl {

namespace {

std::string parseCount(std::string_view flag, const char* text, uint32_t min, uint32_t max,
                       uint32_t& out) {
    std::string_view s(text);
    uint32_t value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || value < min || value > max) {
        return std::string(flag) + " expects an integer in [" + std::to_string(min) + ", " +
               std::to_string(max) + "], got '" + std::string(s) + "'";
    }
    out = value;
    return {};
}

} // namespace

const char* usageText() {
    return "usage: vkscope-workload [--scenario NAME]... [--all] [--list] [--frames N]\n"
           "                        [--device INDEX] [--draws N] [--validation above|below]\n"
           "                        [--layer-setting KEY=VALUE]... [--cycles N] [--threads N]\n"
           "                        [--compute-iterations N] [--quiet] [--no-one-time-submit]\n"
           "                        [--time-frames FROM] [--workloads N] [--submits N]\n"
           "                        [--floor none|timestamps|pipeline_statistics]\n"
           "                        [--record-thread] [--frame-log PATH] [--numbered-frames]\n"
           "                        [--compile-at-frame N]\n";
}

std::string parseOptions(int argc, char** argv, Options& out) {
    bool all = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg(argv[i]);
        auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        auto needsValue = [&](const char* v) {
            return v ? std::string() : std::string(arg) + " needs a value";
        };
        std::string error;
        if (arg == "--all") {
            all = true;
        } else if (arg == "--list") {
            out.list = true;
        } else if (arg == "--quiet") {
            out.quiet = true;
        } else if (arg == "--no-one-time-submit") {
            out.noOneTimeSubmit = true;
        } else if (arg == "--record-thread") {
            out.recordThread = true;
        } else if (arg == "--frame-log") {
            const char* v = value();
            error = needsValue(v);
            if (v) {
                out.frameLog = v;
            }
        } else if (arg == "--numbered-frames") {
            out.numberedFrames = true;
        } else if (arg == "--workloads") {
            const char* v = value();
            error = v ? parseCount(arg, v, 4, 100000, out.workloads) : needsValue(v);
        } else if (arg == "--submits") {
            const char* v = value();
            error = v ? parseCount(arg, v, 1, 64, out.submits) : needsValue(v);
        } else if (arg == "--floor") {
            const char* v = value();
            if (!v) {
                return needsValue(v);
            }
            const std::string_view name(v);
            if (name == "none") {
                out.floor = Floor::None;
            } else if (name == "timestamps") {
                out.floor = Floor::Timestamps;
            } else if (name == "pipeline_statistics") {
                out.floor = Floor::PipelineStatistics;
            } else {
                return "--floor expects 'none', 'timestamps' or 'pipeline_statistics'";
            }
        } else if (arg == "--scenario") {
            const char* v = value();
            if (!v) {
                return needsValue(v);
            }
            if (!findScenario(v)) {
                return std::string("unknown scenario '") + v + "' (see --list)";
            }
            out.scenarios.emplace_back(v);
        } else if (arg == "--frames") {
            const char* v = value();
            error = v ? parseCount(arg, v, 1, 1000000, out.frames) : needsValue(v);
        } else if (arg == "--device") {
            const char* v = value();
            error = v ? parseCount(arg, v, 0, 1024, out.device) : needsValue(v);
        } else if (arg == "--draws") {
            const char* v = value();
            error = v ? parseCount(arg, v, 1, 1000000, out.draws) : needsValue(v);
        } else if (arg == "--compute-iterations") {
            const char* v = value();
            error = v ? parseCount(arg, v, 1, 1u << 24, out.computeIterations) : needsValue(v);
        } else if (arg == "--time-frames") {
            const char* v = value();
            uint32_t from = 0;
            error = v ? parseCount(arg, v, 0, 999999, from) : needsValue(v);
            out.timeFramesFrom = from;
        } else if (arg == "--compile-at-frame") {
            const char* v = value();
            uint32_t at = 0;
            error = v ? parseCount(arg, v, 0, 999999, at) : needsValue(v);
            out.compileAtFrame = at;
        } else if (arg == "--cycles") {
            const char* v = value();
            error = v ? parseCount(arg, v, 1, 100000, out.cycles) : needsValue(v);
        } else if (arg == "--threads") {
            const char* v = value();
            uint32_t threads = 0;
            error = v ? parseCount(arg, v, 1, 64, threads) : needsValue(v);
            out.threads = threads;
        } else if (arg == "--validation") {
            const char* v = value();
            if (!v) {
                return needsValue(v);
            }
            std::string_view order(v);
            if (order == "above") {
                out.validation = ValidationOrder::Above;
            } else if (order == "below") {
                out.validation = ValidationOrder::Below;
            } else {
                return "--validation expects 'above' or 'below'";
            }
        } else if (arg == "--layer-setting") {
            const char* v = value();
            if (!v) {
                return needsValue(v);
            }
            std::string_view kv(v);
            size_t eq = kv.find('=');
            if (eq == std::string_view::npos || eq == 0) {
                return "--layer-setting expects KEY=VALUE";
            }
            out.layerSettings.emplace_back(std::string(kv.substr(0, eq)),
                                           std::string(kv.substr(eq + 1)));
        } else {
            return "unknown argument '" + std::string(arg) + "'";
        }
        if (!error.empty()) {
            return error;
        }
    }
    if (all) {
        out.scenarios.clear();
    }
    if (out.timeFramesFrom && *out.timeFramesFrom >= out.frames) {
        return "--time-frames " + std::to_string(*out.timeFramesFrom) +
               " leaves no frame to time: it must be below --frames (" +
               std::to_string(out.frames) + ")";
    }
    return {};
}

} // namespace wl
