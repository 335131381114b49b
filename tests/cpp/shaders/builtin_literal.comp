#version 450
// Reading gl_WorkGroupSize with literal sizes yields an OpConstantComposite decorated
// BuiltIn WorkgroupSize.
layout(local_size_x = 32, local_size_y = 2, local_size_z = 1) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
void main() { data[gl_GlobalInvocationID.x] = gl_WorkGroupSize.x * gl_WorkGroupSize.y; }
