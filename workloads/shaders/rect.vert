#version 450
// Draws one axis-aligned rectangle given in pixels of a 64x64 target; the colour is a
// byte quadruple so the host can predict the exact UNORM result.
#ifdef MULTIVIEW
#extension GL_EXT_multiview : require
#endif

layout(push_constant) uniform Rect {
    ivec4 bounds; // x0, y0, x1, y1 in pixels
    uvec4 color;  // 0..255 per channel
} pc;

layout(location = 0) flat out uvec4 outColor;

void main() {
    // Works for vkCmdDraw (vertex index 0..5) and for the 0..5 index buffer alike.
    const uint corners[6] = uint[6](0u, 1u, 2u, 2u, 1u, 3u);
    uint corner = corners[gl_VertexIndex % 6];
    float x = float((corner & 1u) != 0u ? pc.bounds.z : pc.bounds.x);
    float y = float((corner & 2u) != 0u ? pc.bounds.w : pc.bounds.y);
    gl_Position = vec4(x / 32.0 - 1.0, y / 32.0 - 1.0, 0.5, 1.0);
    uvec4 color = pc.color;
#ifdef MULTIVIEW
    // Each view gets a different blue channel so the host can tell the layers apart.
    color.b = (color.b + 85u * uint(gl_ViewIndex)) & 255u;
#endif
    outColor = color;
}
