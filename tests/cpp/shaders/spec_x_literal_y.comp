#version 450
layout(local_size_x = 16, local_size_y = 4) in;
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
void main() { data[gl_GlobalInvocationID.x] = 1u; }
