#version 450
// data[first + i] += value + i for i < count: a read-modify-write, so running it a wrong
// number of times shows up in the result.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) buffer Data {
    uint data[];
};

layout(push_constant) uniform Params {
    uint first;
    uint count;
    uint value;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) {
        data[pc.first + i] += pc.value + i;
    }
}
