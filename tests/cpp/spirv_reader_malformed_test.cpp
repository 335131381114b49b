// Hand-assembled modules: what glslang does not emit, precedence between the three sources of
// the work-group size, and malformed or hostile input (run under ASan/UBSan).
#include "timeline/spirv_reader.hpp"

#include "spirv_builder.hpp"

#include "shaders/builtin_literal_comp.h"
#include "shaders/literal_comp.h"
#include "shaders/spec_x_comp.h"
#include "shaders/spec_xyz_comp.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <set>
#include <vector>

namespace vkscope {
namespace {

using test::SpirvBuilder;
namespace op = test::op;
using Size = std::array<uint32_t, 3>;

constexpr uint32_t kGLCompute = 5;
constexpr uint32_t kVertex = 0;
constexpr uint32_t kLocalSize = 17;
constexpr uint32_t kLocalSizeId = 38;
constexpr uint32_t kSpecId = 1;
constexpr uint32_t kBuiltIn = 11;
constexpr uint32_t kWorkgroupSize = 25;

// main = 10; uint constants 8 (id 5) and 4 (id 6); spec constant SpecId 7 default 2 (id 7).
std::vector<uint32_t> local_size_id_module(bool with_builtin, bool with_literal) {
    SpirvBuilder b;
    b.preamble().entry_point(kGLCompute, 10, "main");
    if (with_literal) {
        b.ins(op::ExecutionMode, {10, kLocalSize, 1, 1, 1});
    }
    b.ins(op::ExecutionModeId, {10, kLocalSizeId, 5, 6, 7}).ins(op::Decorate, {7, kSpecId, 7});
    if (with_builtin) {
        b.ins(op::Decorate, {20, kBuiltIn, kWorkgroupSize});
    }
    b.types().ins(op::TypeVector, {4, 3, 3});
    b.ins(op::Constant, {3, 5, 8}).ins(op::Constant, {3, 6, 4}).ins(op::SpecConstant, {3, 7, 2});
    if (with_builtin) {
        b.ins(op::ConstantComposite, {4, 20, 6, 6, 5});
    }
    return b.function(10, 11).build(21);
}

std::optional<Size> local_size(const std::vector<uint32_t>& m, const char* entry = "main",
                               const VkSpecializationInfo* spec = nullptr) {
    return compute_local_size(m, entry, spec);
}

TEST(SpirvReaderHandmade, LocalSizeId) {
    const std::vector<uint32_t> m = local_size_id_module(false, false);
    EXPECT_EQ(local_size(m), (Size{8, 4, 2}));
    const uint32_t sixteen = 16;
    const VkSpecializationMapEntry entry{7, 0, 4};
    const VkSpecializationInfo spec{1, &entry, 4, &sixteen};
    EXPECT_EQ(local_size(m, "main", &spec), (Size{8, 4, 16}));
}

TEST(SpirvReaderHandmade, Precedence) {
    EXPECT_EQ(local_size(local_size_id_module(true, true)), (Size{4, 4, 8}));
    EXPECT_EQ(local_size(local_size_id_module(false, true)), (Size{8, 4, 2}));
}

TEST(SpirvReaderHandmade, SeveralEntryPoints) {
    SpirvBuilder b;
    b.preamble()
        .entry_point(kGLCompute, 10, "a")
        .entry_point(kGLCompute, 12, "abcd") // a name filling its words exactly
        .entry_point(kVertex, 14, "main")
        .entry_point(kGLCompute, 16, "main")
        .ins(op::ExecutionMode, {10, kLocalSize, 1, 2, 3})
        .ins(op::ExecutionMode, {12, kLocalSize, 4, 5, 6})
        .ins(op::ExecutionMode, {16, kLocalSize, 7, 1, 1})
        .types();
    const std::vector<uint32_t> m =
        b.function(10, 11).function(12, 13).function(14, 15).function(16, 17).build(18);
    EXPECT_EQ(local_size(m, "a"), (Size{1, 2, 3}));
    EXPECT_EQ(local_size(m, "abcd"), (Size{4, 5, 6}));
    EXPECT_EQ(local_size(m, "main"), (Size{7, 1, 1}));
    EXPECT_EQ(local_size(m, "abc"), std::nullopt);
}

TEST(SpirvReaderHandmade, UnevaluableBuiltinDoesNotFallBack) {
    SpirvBuilder b;
    b.preamble()
        .entry_point(kGLCompute, 10, "main")
        .ins(op::ExecutionMode, {10, kLocalSize, 8, 1, 1})
        .ins(op::Decorate, {7, kSpecId, 0})
        .ins(op::Decorate, {20, kBuiltIn, kWorkgroupSize})
        .types()
        .ins(op::TypeVector, {4, 3, 3})
        .ins(op::Constant, {3, 6, 1})
        .ins(op::SpecConstant, {3, 7, 8})
        .ins(op::SpecConstantOp, {3, 13, op::IAdd, 7, 6})
        .ins(op::SpecConstantComposite, {4, 20, 13, 6, 6});
    EXPECT_EQ(local_size(b.function(10, 11).build(21)), std::nullopt);
}

TEST(SpirvReaderHandmade, InvalidShapes) {
    const auto with_mode = [](std::initializer_list<uint32_t> mode) {
        SpirvBuilder b;
        b.preamble().entry_point(kGLCompute, 10, "main").ins(op::ExecutionMode, mode).types();
        return b.function(10, 11).build(12);
    };
    EXPECT_EQ(local_size(with_mode({10, kLocalSize, 8, 4, 2})), (Size{8, 4, 2}));
    EXPECT_EQ(local_size(with_mode({10, kLocalSize, 0, 4, 2})), std::nullopt); // zero extent
    EXPECT_EQ(local_size(with_mode({10, kLocalSize, 8})), std::nullopt);       // short operands
    EXPECT_EQ(local_size(with_mode({11, kLocalSize, 8, 4, 2})), std::nullopt); // other target

    SpirvBuilder unterminated; // "main" filling its word with no NUL inside the instruction
    unterminated.preamble()
        .ins(op::EntryPoint, {kGLCompute, 10, 'm' | 'a' << 8 | 'i' << 16 | 'n' << 24})
        .ins(op::ExecutionMode, {10, kLocalSize, 8, 4, 2})
        .types();
    EXPECT_EQ(local_size(unterminated.function(10, 11).build(12)), std::nullopt);
}

TEST(SpirvReaderMalformed, HeaderChecks) {
    std::vector<uint32_t> m(literal_comp, literal_comp + std::size(literal_comp));
    ASSERT_EQ(local_size(m), (Size{8, 4, 2}));
    EXPECT_EQ(local_size({}), std::nullopt);
    EXPECT_EQ(local_size(std::vector<uint32_t>(m.begin(), m.begin() + 5)), std::nullopt);
    EXPECT_EQ(local_size(std::vector<uint32_t>(m.begin(), m.begin() + 4)), std::nullopt);
    std::vector<uint32_t> swapped = m;
    for (uint32_t& w : swapped) {
        w = __builtin_bswap32(w);
    }
    EXPECT_EQ(local_size(swapped), std::nullopt);
    std::vector<uint32_t> wrong = m;
    wrong[0] = 0x07230204;
    EXPECT_EQ(local_size(wrong), std::nullopt);
}

TEST(SpirvReaderMalformed, BadWordCounts) {
    const std::vector<uint32_t> m(literal_comp, literal_comp + std::size(literal_comp));
    std::vector<size_t> starts; // instruction starts of the valid module
    for (size_t at = 5; at < m.size(); at += m[at] >> 16) {
        starts.push_back(at);
    }
    for (size_t start : starts) {
        std::vector<uint32_t> zero = m;
        zero[start] &= 0xffffu;
        EXPECT_EQ(local_size(zero), std::nullopt) << "zero word count at " << start;
    }
    std::vector<uint32_t> past_end = m;
    past_end[starts.back()] += 1u << 16;
    EXPECT_EQ(local_size(past_end), std::nullopt);
    // Every cut that falls inside an instruction is rejected; none crashes.
    const std::set<size_t> boundaries(starts.begin(), starts.end());
    for (size_t length = 6; length < m.size(); ++length) {
        const std::vector<uint32_t> cut(m.begin(), m.begin() + static_cast<ptrdiff_t>(length));
        const std::optional<Size> result = local_size(cut);
        if (!boundaries.contains(length)) {
            EXPECT_EQ(result, std::nullopt) << "cut at " << length;
        }
    }
}

// Runs the reader over an exactly-sized heap copy, so that ASan sees any read past the end.
void run_exact(const std::vector<uint32_t>& m, const VkSpecializationInfo* spec) {
    std::unique_ptr<uint32_t[]> copy(new uint32_t[m.size() + (m.empty() ? 1 : 0)]);
    std::copy(m.begin(), m.end(), copy.get());
    (void)compute_local_size(std::span<const uint32_t>(copy.get(), m.size()), "main", spec);
}

TEST(SpirvReaderMalformed, FuzzedMutationsNeverCrash) {
    const std::vector<std::vector<uint32_t>> seeds = {
        {literal_comp, literal_comp + std::size(literal_comp)},
        {spec_x_comp, spec_x_comp + std::size(spec_x_comp)},
        {spec_xyz_comp, spec_xyz_comp + std::size(spec_xyz_comp)},
        {builtin_literal_comp, builtin_literal_comp + std::size(builtin_literal_comp)},
        local_size_id_module(true, true),
        local_size_id_module(false, false)};
    const uint32_t interesting_ops[] = {
        op::EntryPoint, op::ExecutionMode, op::ExecutionModeId,   op::Decorate,
        op::Constant,   op::SpecConstant,  op::ConstantComposite, op::SpecConstantComposite};
    std::mt19937 rng(20240601);
    const auto below = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
    for (int iteration = 0; iteration < 4000; ++iteration) {
        std::vector<uint32_t> m = seeds[below(seeds.size())];
        for (size_t mutations = 1 + below(4); mutations > 0 && !m.empty(); --mutations) {
            const size_t at = below(m.size());
            switch (below(5)) {
            case 0:
                m[at] = rng();
                break;
            case 1:
                m[at] ^= 1u << below(32);
                break;
            case 2:
                m[at] = (m[at] & 0xffffu) | static_cast<uint32_t>(below(8)) << 16;
                break;
            case 3:
                m.resize(below(m.size() + 1));
                break;
            default:
                m[at] = static_cast<uint32_t>(below(8)) << 16 |
                        interesting_ops[below(std::size(interesting_ops))];
            }
        }
        // Random specialization data, map entries reaching anywhere, including outside it.
        std::vector<uint8_t> data(below(16));
        for (uint8_t& byte : data) {
            byte = static_cast<uint8_t>(rng());
        }
        std::vector<VkSpecializationMapEntry> entries(below(4));
        for (VkSpecializationMapEntry& e : entries) {
            e = {static_cast<uint32_t>(below(8)), static_cast<uint32_t>(below(20)), below(10)};
        }
        const VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(),
                                        data.size(), data.data()};
        run_exact(m, &spec);
        run_exact(m, nullptr);
    }
}

TEST(SpirvReaderMalformed, RandomWordsNeverCrash) {
    std::mt19937 rng(7);
    for (int iteration = 0; iteration < 2000; ++iteration) {
        std::vector<uint32_t> m = {0x07230203, 0x00010000, 0, 100, 0};
        m.resize(5 + rng() % 64);
        for (size_t i = 5; i < m.size(); ++i) {
            // Mostly small word counts, so that some walks go deep into the module.
            m[i] = rng() % 3 == 0 ? rng() : (rng() % 6) << 16 | rng() % 400;
        }
        run_exact(m, nullptr);
    }
}

} // namespace
} // namespace vkscope
