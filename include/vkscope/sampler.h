/* vkscope sampler plugins: counters that only the CPU can read, sampled by the vkscope layer
 * between the workloads of a captured frame (docs/counters.md, "CPU-sampled counters").
 *
 * A sampler is a shared library that exports one C function, `vkscope_sampler_entry`, returning
 * a table of four functions: open (for one Vulkan device), its counters (names and units),
 * sample (every counter at once) and close. The layer loads it with dlopen when the `counters`
 * setting names it (`sampler:PATH`, or `sampler:NAME` for the samplers built into the layer).
 *
 * Threading: the layer calls open and close on the thread that creates and destroys the device,
 * and sample on the thread that submits, one call at a time per opened sampler; a sampler needs
 * no locking of its own unless it shares state between devices.
 *
 * Cost: sample runs while the GPU waits for it (between two workloads), so it should take
 * microseconds: read counters, do no I/O beyond that, allocate nothing.
 *
 * This header is C (C99 and later) and C++ alike and has no dependency besides <stdint.h> and
 * <stddef.h>. The ABI is versioned: the layer passes the version it speaks and a sampler returns
 * null for a version it does not know. */
#ifndef VKSCOPE_SAMPLER_H
#define VKSCOPE_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VKSCOPE_SAMPLER_ABI_VERSION 1u

/* The device a sampler is opened for: what Vulkan says of it (VkPhysicalDeviceProperties and
 * VkPhysicalDeviceIDProperties / VkPhysicalDeviceDriverProperties where the device has them). */
typedef struct vkscope_sampler_device {
    /* PCI vendor: 0x10de NVIDIA, 0x13b5 Arm, 0x10005 Mesa (software) */
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t driver_version; /* in the vendor's own encoding */
    uint32_t driver_id;      /* VkDriverId, 0 when unknown */
    const char* device_name;
    const char* driver_info; /* VkPhysicalDeviceDriverProperties::driverInfo, "" when unknown */
    uint8_t device_uuid[16]; /* all zero when unknown */
    uint8_t has_pci;         /* 1: the pci_* fields are set (VK_EXT_pci_bus_info) */
    uint32_t pci_domain;
    uint32_t pci_bus;
    uint32_t pci_device;
    uint32_t pci_function;
} vkscope_sampler_device;

/* How a counter's samples become a workload's value. */
typedef enum vkscope_counter_kind {
    /* A running total (energy, CPU time): the workload gets the sample after it less the one
     * before it. */
    VKSCOPE_COUNTER_CUMULATIVE = 0,
    /* A level (a clock frequency, a set of flags): the workload gets the sample taken right
     * after it. */
    VKSCOPE_COUNTER_LEVEL = 1,
    /* A level that is a clock: as LEVEL, and a workload whose samples before and after differ
     * is marked `clock_changed` (serialization and CPU round trips idle the GPU, and its power
     * management may lower its clocks); vkscope report warns of them. */
    VKSCOPE_COUNTER_CLOCK = 2
} vkscope_counter_kind;

typedef struct vkscope_sampler_counter {
    const char* name;        /* snake case, no unit suffix: "energy", "sm_clock" */
    const char* unit;        /* what one counts: "ns", "mJ", "MHz", "bytes" */
    const char* description; /* one line */
    uint32_t kind;           /* a vkscope_counter_kind */
} vkscope_sampler_counter;

typedef struct vkscope_sampler_api {
    uint32_t abi_version; /* VKSCOPE_SAMPLER_ABI_VERSION */
    const char* name;     /* short, snake case; counter names are shown as given */

    /* A sampler for `device`, or null when it cannot sample there: then it writes one line
     * saying why into `error` (at most error_size bytes, NUL-terminated). */
    void* (*open)(const vkscope_sampler_device* device, char* error, size_t error_size);

    /* Its counters, valid until close: *count of them. */
    const vkscope_sampler_counter* (*counters)(void* sampler, uint32_t* count);

    /* Every counter's current value into values[0 .. count-1]. Returns 0 on success; anything
     * else means no sample (the workloads around it get no values). */
    int (*sample)(void* sampler, double* values);

    void (*close)(void* sampler);
} vkscope_sampler_api;

/* The one symbol a sampler library exports. */
typedef const vkscope_sampler_api* (*vkscope_sampler_entry_fn)(uint32_t abi_version);
#define VKSCOPE_SAMPLER_ENTRY "vkscope_sampler_entry"

#ifdef __cplusplus
}
#endif

#endif /* VKSCOPE_SAMPLER_H */
