#pragma once
// Hand-assembles small SPIR-V modules for what glslang does not emit (LocalSizeId, several entry
// points) and for malformed input.

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace vkscope::test {

namespace op {
constexpr uint32_t Capability = 17, MemoryModel = 14, EntryPoint = 15, ExecutionMode = 16,
                   ExecutionModeId = 331, Decorate = 71, TypeVoid = 19, TypeFunction = 33,
                   TypeInt = 21, TypeVector = 23, Constant = 43, ConstantComposite = 44,
                   SpecConstant = 50, SpecConstantComposite = 51, SpecConstantOp = 52,
                   Function = 54, Label = 248, Return = 253, FunctionEnd = 56, IAdd = 128;
} // namespace op

class SpirvBuilder {
public:
    SpirvBuilder() : words_{0x07230203, 0x00010600, 0, 0, 0} {}

    SpirvBuilder& ins(uint32_t opcode, std::initializer_list<uint32_t> operands) {
        words_.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | opcode);
        words_.insert(words_.end(), operands);
        return *this;
    }

    // OpEntryPoint <model> <id> "<name>" with the name packed as a SPIR-V literal string.
    SpirvBuilder& entry_point(uint32_t model, uint32_t id, std::string_view name) {
        std::vector<uint32_t> operands = {model, id};
        const size_t name_words = name.size() / 4 + 1; // always room for the NUL
        for (size_t w = 0; w < name_words; ++w) {
            uint32_t word = 0;
            for (size_t b = 0; b < 4; ++b) {
                const size_t i = w * 4 + b;
                if (i < name.size()) {
                    word |= static_cast<uint32_t>(static_cast<uint8_t>(name[i])) << (8 * b);
                }
            }
            operands.push_back(word);
        }
        words_.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | op::EntryPoint);
        words_.insert(words_.end(), operands.begin(), operands.end());
        return *this;
    }

    // The boilerplate of a module with compute entry points and a 32-bit uint type: ids 1 to 3
    // are void, the function type and uint.
    SpirvBuilder& preamble() { return ins(op::Capability, {1}).ins(op::MemoryModel, {0, 1}); }
    SpirvBuilder& types() {
        return ins(op::TypeVoid, {1}).ins(op::TypeFunction, {2, 1}).ins(op::TypeInt, {3, 32, 0});
    }
    SpirvBuilder& function(uint32_t id, uint32_t label) {
        return ins(op::Function, {1, id, 0, 2})
            .ins(op::Label, {label})
            .ins(op::Return, {})
            .ins(op::FunctionEnd, {});
    }

    std::vector<uint32_t> build(uint32_t bound) {
        words_[3] = bound;
        return words_;
    }

private:
    std::vector<uint32_t> words_;
};

} // namespace vkscope::test
