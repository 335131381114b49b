#version 450
// Fixed per-invocation work: `iterations` steps of a 32-bit LCG. The iteration count comes
// from a push constant so the compiler cannot fold the loop; the host verifies every element
// with the closed form of the same recurrence.
#ifdef SPEC_LOCAL_SIZE
layout(local_size_x_id = 0) in;
#else
layout(local_size_x = 64) in;
#endif

layout(set = 0, binding = 0) buffer Output {
    uint data[];
};

layout(push_constant) uniform Params {
    uint offset;
    uint rowStride;
    uint seed;
    uint iterations;
} pc;

void main() {
#ifdef DISPATCH_BASE
    // The same ID computed another way, only so that this variant's SPIR-V differs from the
    // one used without VK_PIPELINE_CREATE_DISPATCH_BASE_BIT: the NVIDIA driver (Vulkan
    // 1.4.312, H200) reuses a pipeline binary compiled from identical SPIR-V without that
    // flag, and that binary ignores the dispatch base.
    uvec3 gid = gl_LocalInvocationID + gl_WorkGroupSize * gl_WorkGroupID;
#else
    uvec3 gid = gl_GlobalInvocationID;
#endif
    uint index = pc.offset + gid.y * pc.rowStride + gid.x;
    uint x = pc.seed ^ index;
    for (uint i = 0u; i < pc.iterations; ++i) {
        x = x * 1664525u + 1013904223u;
    }
    data[index] = x;
}
