#version 450
// local_size_x_id: glslang emits a WorkgroupSize spec-constant composite whose x is SpecId 0
// with default 64, plus a LocalSize 64 1 1 execution mode that the builtin overrides.
layout(local_size_x = 64) in;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
void main() { data[gl_GlobalInvocationID.x] = 1u; }
