#version 460
// 'H' with the instance's custom index, so the value also shows which instance was hit.
#extension GL_EXT_ray_tracing : require

layout(location = 0) rayPayloadInEXT uint payload;

void main() {
    payload = 0x48000000u | (uint(gl_InstanceCustomIndexEXT) << 16);
}
