#version 450
// LocalSize literals only: nothing in the shader reads gl_WorkGroupSize.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
void main() { data[gl_GlobalInvocationID.x] = gl_LocalInvocationIndex; }
