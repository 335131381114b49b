#include "timeline/spirv_reader.hpp"

#include "shaders/builtin_literal_comp.h"
#include "shaders/literal_comp.h"
#include "shaders/spec_x_comp.h"
#include "shaders/spec_x_literal_y_comp.h"
#include "shaders/spec_xyz_comp.h"
#include "shaders/vertex_vert.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace vkscope {
namespace {

using Size = std::array<uint32_t, 3>;

template <size_t N> std::span<const uint32_t> words(const uint32_t (&module)[N]) {
    return std::span<const uint32_t>(module, N);
}

// One specialization constant per call site, with its data laid out as the map entry says.
struct Spec {
    std::vector<VkSpecializationMapEntry> entries;
    std::vector<unsigned char> data;
    VkSpecializationInfo info{};

    template <typename T> Spec& set(uint32_t id, T value) {
        entries.push_back({id, static_cast<uint32_t>(data.size()), sizeof(T)});
        data.resize(data.size() + sizeof(T));
        std::memcpy(data.data() + entries.back().offset, &value, sizeof(T));
        return *this;
    }
    const VkSpecializationInfo* get() {
        info = {static_cast<uint32_t>(entries.size()), entries.data(), data.size(), data.data()};
        return &info;
    }
};

TEST(SpirvReader, LiteralLocalSize) {
    EXPECT_EQ(compute_local_size(words(literal_comp), "main", nullptr), (Size{8, 4, 2}));
    Spec spec; // unrelated specialization data changes nothing
    EXPECT_EQ(compute_local_size(words(literal_comp), "main", spec.set<uint32_t>(0, 99).get()),
              (Size{8, 4, 2}));
}

TEST(SpirvReader, SpecIdDefault) {
    EXPECT_EQ(compute_local_size(words(spec_x_comp), "main", nullptr), (Size{64, 1, 1}));
    Spec empty;
    EXPECT_EQ(compute_local_size(words(spec_x_comp), "main", empty.get()), (Size{64, 1, 1}));
    Spec other;
    EXPECT_EQ(compute_local_size(words(spec_x_comp), "main", other.set<uint32_t>(1, 7).get()),
              (Size{64, 1, 1}));
}

TEST(SpirvReader, SpecIdSpecialized) {
    Spec spec;
    EXPECT_EQ(compute_local_size(words(spec_x_comp), "main", spec.set<uint32_t>(0, 128).get()),
              (Size{128, 1, 1}));
    Spec same;
    EXPECT_EQ(compute_local_size(words(spec_x_comp), "main", same.set<uint32_t>(0, 64).get()),
              (Size{64, 1, 1}));
}

TEST(SpirvReader, SpecIdWithLiteralY) {
    EXPECT_EQ(compute_local_size(words(spec_x_literal_y_comp), "main", nullptr), (Size{16, 4, 1}));
    Spec spec;
    EXPECT_EQ(
        compute_local_size(words(spec_x_literal_y_comp), "main", spec.set<uint32_t>(0, 32).get()),
        (Size{32, 4, 1}));
}

TEST(SpirvReader, WorkgroupSizeBuiltinConstant) {
    EXPECT_EQ(compute_local_size(words(builtin_literal_comp), "main", nullptr), (Size{32, 2, 1}));
}

TEST(SpirvReader, AllThreeSpecIdsAndEntrySizes) {
    EXPECT_EQ(compute_local_size(words(spec_xyz_comp), "main", nullptr), (Size{4, 3, 2}));
    Spec y_only;
    EXPECT_EQ(compute_local_size(words(spec_xyz_comp), "main", y_only.set<uint32_t>(4, 5).get()),
              (Size{4, 5, 2}));
    // Map entries of other sizes than 4 are read as integers of their own size.
    Spec mixed;
    mixed.set<uint8_t>(3, 200).set<uint16_t>(4, 300).set<uint64_t>(5, 7);
    EXPECT_EQ(compute_local_size(words(spec_xyz_comp), "main", mixed.get()), (Size{200, 300, 7}));
}

TEST(SpirvReader, SpecEntryOutsideDataFallsBackToDefault) {
    Spec spec;
    spec.set<uint32_t>(3, 9);
    spec.entries[0].offset = 2; // reaches past pData
    EXPECT_EQ(compute_local_size(words(spec_xyz_comp), "main", spec.get()), (Size{4, 3, 2}));
    Spec odd;
    odd.set<uint32_t>(3, 9);
    odd.entries[0].size = 3;
    EXPECT_EQ(compute_local_size(words(spec_xyz_comp), "main", odd.get()), (Size{4, 3, 2}));
    Spec null_data;
    null_data.set<uint32_t>(3, 9);
    VkSpecializationInfo info = *null_data.get();
    info.pData = nullptr;
    EXPECT_EQ(compute_local_size(words(spec_xyz_comp), "main", &info), (Size{4, 3, 2}));
}

TEST(SpirvReader, EntryPointMustMatchAndBeCompute) {
    EXPECT_EQ(compute_local_size(words(literal_comp), "mai", nullptr), std::nullopt);
    EXPECT_EQ(compute_local_size(words(literal_comp), "main2", nullptr), std::nullopt);
    EXPECT_EQ(compute_local_size(words(literal_comp), "", nullptr), std::nullopt);
    EXPECT_EQ(compute_local_size(words(literal_comp), nullptr, nullptr), std::nullopt);
    EXPECT_EQ(compute_local_size(words(vertex_vert), "main", nullptr), std::nullopt);
}

TEST(SpirvReader, IsSpirv) {
    const auto* raw = reinterpret_cast<const uint8_t*>(literal_comp);
    EXPECT_TRUE(is_spirv(std::span<const uint8_t>(raw, sizeof literal_comp)));
    EXPECT_FALSE(is_spirv(std::span<const uint8_t>(raw, sizeof literal_comp - 1)));
    EXPECT_FALSE(is_spirv(std::span<const uint8_t>(raw, 16)));
    EXPECT_FALSE(is_spirv({}));
    const std::string glsl = "#version 450\nvoid main() {}\n    ";
    EXPECT_FALSE(is_spirv(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(glsl.data()),
                                                   glsl.size() / 4 * 4)));
    // Unaligned storage is fine: the magic is copied out, not dereferenced as a word.
    std::vector<uint8_t> shifted(sizeof literal_comp + 1);
    std::memcpy(shifted.data() + 1, literal_comp, sizeof literal_comp);
    EXPECT_TRUE(is_spirv(std::span<const uint8_t>(shifted).subspan(1)));
    std::vector<uint8_t> swapped(raw, raw + sizeof literal_comp);
    std::swap(swapped[0], swapped[3]);
    std::swap(swapped[1], swapped[2]);
    EXPECT_FALSE(is_spirv(swapped));
}

} // namespace
} // namespace vkscope
