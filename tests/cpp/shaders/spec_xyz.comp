#version 450
layout(local_size_x = 4, local_size_y = 3, local_size_z = 2) in;
layout(local_size_x_id = 3, local_size_y_id = 4, local_size_z_id = 5) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
void main() { data[gl_GlobalInvocationID.x] = gl_WorkGroupSize.z; }
