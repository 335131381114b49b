#include "timeline/spirv_reader.hpp"

#include <cstring>

namespace vkscope {
namespace {

// The few SPIR-V enumerants this reader needs (SPIR-V specification, section 3).
enum Op : uint32_t {
    OpEntryPoint = 15,
    OpExecutionMode = 16,
    OpConstant = 43,
    OpConstantComposite = 44,
    OpSpecConstant = 50,
    OpSpecConstantComposite = 51,
    OpDecorate = 71,
    OpExecutionModeId = 331,
};
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kExecutionModeLocalSizeId = 38;
constexpr uint32_t kDecorationSpecId = 1;
constexpr uint32_t kDecorationBuiltIn = 11;
constexpr uint32_t kBuiltInWorkgroupSize = 25;
constexpr size_t kHeaderWords = 5;

using Size3 = std::array<uint32_t, 3>;

// A module whose every instruction has been checked to lie within its words, so that walking it
// again needs no checks beyond each instruction's own operand count. The lookups below rescan the
// module instead of indexing it: they run a handful of times per pipeline, and scanning needs no
// allocation on a path where the module may be megabytes of untrusted data.
class Module {
public:
    explicit Module(std::span<const uint32_t> words) : words_(words) {}

    bool validate() const noexcept {
        if (words_.size() < kHeaderWords || words_[0] != kSpirvMagic) {
            return false; // Too short, not SPIR-V, or SPIR-V in the other byte order.
        }
        size_t at = kHeaderWords;
        while (at < words_.size()) {
            const size_t count = words_[at] >> 16;
            if (count == 0 || count > words_.size() - at) {
                return false;
            }
            at += count;
        }
        return true;
    }

    // Calls f(opcode, instruction words) for each instruction until f returns true.
    template <typename F> bool any_of(F&& f) const {
        for (size_t at = kHeaderWords; at < words_.size();) {
            const size_t count = words_[at] >> 16;
            if (f(words_[at] & 0xffffu, words_.subspan(at, count))) {
                return true;
            }
            at += count;
        }
        return false;
    }

    // The constant instruction (scalar or composite, plain or specialization) defining `id`.
    std::span<const uint32_t> find_constant(uint32_t id) const {
        std::span<const uint32_t> found;
        any_of([&](uint32_t op, std::span<const uint32_t> ins) {
            const bool constant = op == OpConstant || op == OpSpecConstant ||
                                  op == OpConstantComposite || op == OpSpecConstantComposite;
            if (constant && ins.size() >= 3 && ins[2] == id) {
                found = ins;
                return true;
            }
            return false;
        });
        return found;
    }

    std::optional<uint32_t> spec_id(uint32_t id) const {
        std::optional<uint32_t> found;
        any_of([&](uint32_t op, std::span<const uint32_t> ins) {
            if (op == OpDecorate && ins.size() >= 4 && ins[1] == id &&
                ins[2] == kDecorationSpecId) {
                found = ins[3];
                return true;
            }
            return false;
        });
        return found;
    }

private:
    std::span<const uint32_t> words_;
};

// Literal strings pack UTF-8 octets four to a word, first octet in the lowest bits, whatever the
// host byte order; a name without its terminating NUL inside the instruction never matches.
bool literal_equals(std::span<const uint32_t> words, const char* name) {
    size_t i = 0;
    for (uint32_t word : words) {
        for (int shift = 0; shift < 32; shift += 8, ++i) {
            const char c = static_cast<char>((word >> shift) & 0xffu);
            if (c != name[i]) {
                return false;
            }
            if (c == '\0') {
                return true;
            }
        }
    }
    return false;
}

// A map entry of another size than the constant's 32 bits is read as the integer of its own
// size and narrowed; an entry reaching outside pData is ignored, as if it were absent.
std::optional<uint32_t> specialized_value(const VkSpecializationInfo* spec, uint32_t spec_id) {
    if (spec == nullptr || spec->pMapEntries == nullptr || spec->pData == nullptr) {
        return std::nullopt;
    }
    const auto* data = static_cast<const unsigned char*>(spec->pData);
    for (uint32_t i = 0; i < spec->mapEntryCount; ++i) {
        const VkSpecializationMapEntry& entry = spec->pMapEntries[i];
        if (entry.constantID != spec_id) {
            continue;
        }
        if (entry.size > spec->dataSize || entry.offset > spec->dataSize - entry.size) {
            return std::nullopt;
        }
        const unsigned char* at = data + entry.offset;
        switch (entry.size) {
        case 1:
            return *at;
        case 2: {
            uint16_t v;
            std::memcpy(&v, at, sizeof v);
            return v;
        }
        case 4: {
            uint32_t v;
            std::memcpy(&v, at, sizeof v);
            return v;
        }
        case 8: {
            uint64_t v;
            std::memcpy(&v, at, sizeof v);
            return static_cast<uint32_t>(v);
        }
        default:
            return std::nullopt;
        }
    }
    return std::nullopt;
}

// The value of an integer OpConstant or OpSpecConstant (the low word when it is 64 bits wide).
std::optional<uint32_t> scalar_value(const Module& module, uint32_t id,
                                     const VkSpecializationInfo* spec) {
    const std::span<const uint32_t> ins = module.find_constant(id);
    if (ins.size() < 4) {
        return std::nullopt;
    }
    const uint32_t op = ins[0] & 0xffffu;
    if (op == OpSpecConstant) {
        if (const std::optional<uint32_t> spec_id = module.spec_id(id)) {
            if (const std::optional<uint32_t> v = specialized_value(spec, *spec_id)) {
                return v;
            }
        }
        return ins[3];
    }
    if (op == OpConstant) {
        return ins[3];
    }
    return std::nullopt;
}

std::optional<Size3> evaluate_ids(const Module& module, std::span<const uint32_t> ids,
                                  const VkSpecializationInfo* spec) {
    if (ids.size() != 3) {
        return std::nullopt;
    }
    Size3 size{};
    for (size_t i = 0; i < 3; ++i) {
        const std::optional<uint32_t> v = scalar_value(module, ids[i], spec);
        if (!v) {
            return std::nullopt;
        }
        size[i] = *v;
    }
    return size;
}

// Where the work-group size of entry point `entry` comes from, in the order the SPIR-V
// specification gives precedence: the first of the three that exists decides, even when it then
// cannot be evaluated (falling back would report a size the pipeline does not use).
std::optional<Size3> local_size_of(const Module& module, uint32_t entry,
                                   const VkSpecializationInfo* spec) {
    std::optional<Size3> result;
    const bool builtin = module.any_of([&](uint32_t op, std::span<const uint32_t> ins) {
        if (op != OpDecorate || ins.size() < 4 || ins[2] != kDecorationBuiltIn ||
            ins[3] != kBuiltInWorkgroupSize) {
            return false;
        }
        // Vulkan only allows a constant here; a decorated variable (OpenCL style) is ignored.
        const std::span<const uint32_t> def = module.find_constant(ins[1]);
        const uint32_t def_op = def.empty() ? 0 : def[0] & 0xffffu;
        if (def_op != OpConstantComposite && def_op != OpSpecConstantComposite) {
            return false;
        }
        result = evaluate_ids(module, def.subspan(3), spec);
        return true;
    });
    if (builtin) {
        return result;
    }
    const bool by_id = module.any_of([&](uint32_t op, std::span<const uint32_t> ins) {
        if (op != OpExecutionModeId || ins.size() < 3 || ins[1] != entry ||
            ins[2] != kExecutionModeLocalSizeId) {
            return false;
        }
        result = evaluate_ids(module, ins.subspan(3), spec);
        return true;
    });
    if (by_id) {
        return result;
    }
    module.any_of([&](uint32_t op, std::span<const uint32_t> ins) {
        if (op != OpExecutionMode || ins.size() != 6 || ins[1] != entry ||
            ins[2] != kExecutionModeLocalSize) {
            return false;
        }
        result = Size3{ins[3], ins[4], ins[5]};
        return true;
    });
    return result;
}

} // namespace

bool is_spirv(std::span<const uint8_t> bytes) noexcept {
    if (bytes.size() < kHeaderWords * sizeof(uint32_t) || bytes.size() % sizeof(uint32_t) != 0) {
        return false;
    }
    uint32_t magic;
    std::memcpy(&magic, bytes.data(), sizeof magic);
    return magic == kSpirvMagic;
}

std::optional<std::array<uint32_t, 3>> compute_local_size(std::span<const uint32_t> spirv,
                                                          const char* entry_point,
                                                          const VkSpecializationInfo* spec) {
    const Module module(spirv);
    if (entry_point == nullptr || !module.validate()) {
        return std::nullopt;
    }
    // A module may hold entry points of several stages under one name; only the compute one counts.
    std::optional<uint32_t> entry;
    module.any_of([&](uint32_t op, std::span<const uint32_t> ins) {
        if (op == OpEntryPoint && ins.size() >= 4 && ins[1] == kExecutionModelGLCompute &&
            literal_equals(ins.subspan(3), entry_point)) {
            entry = ins[2];
            return true;
        }
        return false;
    });
    if (!entry) {
        return std::nullopt;
    }
    const std::optional<Size3> size = local_size_of(module, *entry, spec);
    // A zero extent is invalid SPIR-V; reporting it would turn into zero invocations downstream.
    if (!size || (*size)[0] == 0 || (*size)[1] == 0 || (*size)[2] == 0) {
        return std::nullopt;
    }
    return size;
}

} // namespace vkscope
