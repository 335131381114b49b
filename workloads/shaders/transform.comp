#version 450
// dst[i] = src[i] * 3 + 7: consumes data produced by another queue or command buffer.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Source {
    uint src[];
};
layout(set = 0, binding = 1) writeonly buffer Destination {
    uint dst[];
};

layout(push_constant) uniform Params {
    uint count;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) {
        dst[i] = src[i] * 3u + 7u;
    }
}
