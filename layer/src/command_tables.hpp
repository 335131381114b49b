#pragma once
// Lookup tables generated from the registry and layer/hooks.toml (command_tables.gen.cpp).

#include "hooks.gen.hpp"

#include <cstddef>
#include <vulkan/vulkan.h>

namespace vkscope {

enum class CommandLevel : unsigned char { global, instance, device };

struct HookEntry {
    const char* name;
    PFN_vkVoidFunction function;
    Feature feature;
    CommandLevel level;
};

struct PassthroughEntry {
    const char* name;
    PFN_vkVoidFunction function;
};

struct KnownCommand {
    const char* name;
    CommandLevel level;
};

const HookEntry* find_hook(const char* name);
// The generated forwarding entry point of a dispatchable command (passthrough = wrapped).
const PassthroughEntry* find_passthrough(const char* name);
// Every command of the registry the layer was built from; unknown ones are forwarded untouched.
const KnownCommand* find_known_command(const char* name);
size_t known_command_count();

} // namespace vkscope
