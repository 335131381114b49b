/* A sampler plugin for vkscope's tests: `samples` counts the samples taken (a running total, so
 * each workload between two consecutive samples gets exactly 1), `sample_number` is the same
 * count as a level (the workload gets the sample right after it), `fake_clock` a clock that
 * drops once, between the device's 4th and 5th samples. */
#include <stdio.h>
#include <stdlib.h>
#include <vkscope/sampler.h>

typedef struct {
    double taken;
} counting;

static const vkscope_sampler_counter kCounters[] = {
    {"samples", "samples", "samples taken so far", VKSCOPE_COUNTER_CUMULATIVE},
    {"sample_number", "samples", "the sample's number", VKSCOPE_COUNTER_LEVEL},
    {"fake_clock", "MHz", "1500 for four samples, then 1200", VKSCOPE_COUNTER_CLOCK},
};

static void* open_sampler(const vkscope_sampler_device* device, char* error, size_t size) {
    if (!device->device_name || !device->device_name[0]) {
        snprintf(error, size, "no device name");
        return NULL;
    }
    return calloc(1, sizeof(counting));
}

static const vkscope_sampler_counter* counters(void* sampler, uint32_t* count) {
    (void)sampler;
    *count = 3;
    return kCounters;
}

static int sample(void* sampler, double* values) {
    counting* c = (counting*)sampler;
    c->taken += 1;
    values[0] = c->taken;
    values[1] = c->taken;
    values[2] = c->taken <= 4 ? 1500 : 1200;
    return 0;
}

static void close_sampler(void* sampler) {
    free(sampler);
}

static const vkscope_sampler_api kApi = {VKSCOPE_SAMPLER_ABI_VERSION, "counting", open_sampler,
                                         counters, sample, close_sampler};

const vkscope_sampler_api* vkscope_sampler_entry(uint32_t abi_version) {
    return abi_version == VKSCOPE_SAMPLER_ABI_VERSION ? &kApi : NULL;
}
