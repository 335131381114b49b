#version 460
#extension GL_EXT_ray_tracing : require

layout(location = 0) rayPayloadInEXT uint payload;

void main() {
    payload = 0x4d000000u; // 'M'
}
