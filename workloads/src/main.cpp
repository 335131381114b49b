// vkscope-workload: runs a fixed set of self-verifying Vulkan scenarios.
//
// Exit codes: 0 all verified, 1 a verification failed, 2 usage error, 3 validation messages
// (with --validation), 4 Vulkan setup error.

#include "context.h"
#include "errors.h"
#include "janitor.h"
#include "kernels.h"
#include "options.h"
#include "pipelines.h"
#include "resources.h"
#include "scenario.h"
#include "shaders.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace {

using namespace wl;

// PASS and SKIP go to stdout, FAIL to stderr; flushing keeps them in order when both are
// captured together.
void verdict(const char* word, const char* name, const char* detail = nullptr) {
    if (detail) {
        std::printf("%s %s: %s\n", word, name, detail);
    } else {
        std::printf("%s %s\n", word, name);
    }
    std::fflush(stdout);
}

// CPU time of every thread of the process (the driver's and any layer's included), user and
// system: what a frame costs the CPU, next to its wall-clock time.
double processCpuMs() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
    return ms(usage.ru_utime) + ms(usage.ru_stime);
}

void fail(const char* name, const char* what) {
    std::fflush(stdout);
    std::fprintf(stderr, "FAIL %s: %s\n", name, what);
}

// Runs the scenarios on a fresh instance and device. Returns true if any verification failed.
bool runCycle(const Options& options, const std::vector<const ScenarioInfo*>& selected,
              bool describe) {
    Context ctx(options);
    if (describe) {
        std::fprintf(stderr, "%s\n", ctx.describe().c_str());
    }

    // One entry per selected scenario, in list order; `scenario` is null once it failed or
    // was skipped.
    struct Run {
        const ScenarioInfo* info;
        std::unique_ptr<Scenario> scenario;
        std::string skipped;
        bool failed = false;
    };
    std::vector<Run> runs;
    bool anyFailed = false;
    // Scenarios release their objects before the device goes away, newest first.
    struct Teardown {
        std::vector<Run>& list;
        ~Teardown() {
            while (!list.empty()) {
                list.pop_back();
            }
        }
    } teardown{runs};
    // What --compile-at-frame creates; released (first) before the device goes away.
    Janitor compiled;
    compiled.attach(ctx.device);
    auto failRun = [&](Run& run, const char* what) {
        fail(run.info->name, what);
        run.failed = true;
        run.scenario.reset();
        anyFailed = true;
    };

    for (const ScenarioInfo* info : selected) {
        Run& run = runs.emplace_back(Run{info, info->create(), {}});
        try {
            run.scenario->setup(ctx);
        } catch (const SkipScenario& skip) {
            run.skipped = skip.what();
            run.scenario.reset();
        } catch (const VerifyError& error) {
            failRun(run, error.what());
        }
    }

    using Clock = std::chrono::steady_clock;
    Clock::time_point timedFrom{};
    double cpuFrom = 0;
    for (uint32_t frame = 0; frame < options.frames; ++frame) {
        if (options.timeFramesFrom && frame == *options.timeFramesFrom) {
            timedFrom = Clock::now();
            cpuFrom = processCpuMs();
        }
        if (options.compileAtFrame && frame == *options.compileAtFrame) {
            // Kept until the cycle ends, like a scenario's objects.
            createComputeProgram(ctx, compiled, spirv::addComp(), 1, sizeof(AddPush));
        }
        for (Run& run : runs) {
            if (!run.scenario) {
                continue;
            }
            try {
                run.scenario->frame(ctx, frame);
            } catch (const VerifyError& error) {
                failRun(run, error.what());
            }
        }
        ctx.endFrame(frame);
    }
    if (options.timeFramesFrom) {
        const uint32_t timed = options.frames - *options.timeFramesFrom;
        const std::chrono::duration<double, std::milli> spent = Clock::now() - timedFrom;
        const double cpu = processCpuMs() - cpuFrom;
        std::printf("frame time: %.6f ms per frame, CPU %.6f ms per frame over %u frames\n",
                    spent.count() / timed, cpu / timed, timed);
        std::fflush(stdout);
    }

    for (const Run& run : runs) {
        if (run.scenario) {
            if (const std::string line = run.scenario->summary(); !line.empty()) {
                std::printf("%s\n", line.c_str());
                std::fflush(stdout);
            }
        }
    }
    for (const Run& run : runs) {
        if (!run.skipped.empty()) {
            verdict("SKIP", run.info->name, run.skipped.c_str());
        } else if (!run.failed && !options.quiet) {
            verdict("PASS", run.info->name);
        }
    }
    return anyFailed;
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    const std::string error = parseOptions(argc, argv, options);
    if (!error.empty()) {
        std::fprintf(stderr, "vkscope-workload: %s\n%s", error.c_str(), usageText());
        return 2;
    }
    wl::keepOneTimeSubmit(!options.noOneTimeSubmit);
    if (options.list) {
        for (const ScenarioInfo& info : allScenarios()) {
            std::printf("%s\n", info.name);
        }
        return 0;
    }

    // Always in the fixed list order, whatever order --scenario named them in.
    std::vector<const ScenarioInfo*> selected;
    for (const ScenarioInfo& info : allScenarios()) {
        bool wanted = options.scenarios.empty();
        for (const std::string& name : options.scenarios) {
            wanted = wanted || name == info.name;
        }
        if (wanted) {
            selected.push_back(&info);
        }
    }
    for (const ScenarioInfo& info : namedOnlyScenarios()) {
        for (const std::string& name : options.scenarios) {
            if (name == info.name) {
                selected.push_back(&info);
                break;
            }
        }
    }

    bool failed = false;
    bool setupError = false;
    for (uint32_t cycle = 0; cycle < options.cycles && !setupError; ++cycle) {
        try {
            failed = runCycle(options, selected, cycle == 0 && !options.quiet) || failed;
        } catch (const VulkanError& e) {
            std::fflush(stdout);
            std::fprintf(stderr, "vulkan error: %s\n", e.what());
            setupError = true;
        } catch (const std::exception& e) {
            std::fflush(stdout);
            std::fprintf(stderr, "error: %s\n", e.what());
            setupError = true;
        }
    }

    const uint32_t messages = validationMessageCount();
    if (options.validation != ValidationOrder::None) {
        std::printf("validation messages: %u\n", messages);
        std::fflush(stdout);
    }
    if (setupError) {
        return 4;
    }
    if (failed) {
        return 1;
    }
    if (options.validation != ValidationOrder::None && messages > 0) {
        return 3;
    }
    return 0;
}
