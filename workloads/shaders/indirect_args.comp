#version 450
// Writes the parameters of a vkCmdDrawIndirectCount on the GPU: `slots` draw commands for draws
// first, first + 1, ... (in the vertex numbering of indirect_rect.vert) and the count of them
// that are to run.
layout(local_size_x = 8) in;

layout(set = 0, binding = 0) writeonly buffer Count {
    uint drawCount;
};
layout(set = 0, binding = 1) writeonly buffer Commands {
    uvec4 commands[]; // VkDrawIndirectCommand: vertexCount, instanceCount, firstVertex, firstInstance
};

layout(push_constant) uniform Params {
    uint first;
    uint count;
    uint slots;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.slots) {
        commands[i] = uvec4(6u, 1u, 6u * (pc.first + i), 0u);
    }
    if (i == 0u) {
        drawCount = pc.count;
    }
}
