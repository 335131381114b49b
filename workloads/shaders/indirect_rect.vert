#version 450
// The rectangles of rect.vert for indirect draws, where push constants cannot change between the
// draws of one command: draw d takes vertices 6d..6d+5 (firstVertex or vertexOffset = 6d in its
// indirect command) and reads its rectangle from a table the host filled.

struct Rect {
    ivec4 bounds; // x0, y0, x1, y1 in pixels
    uvec4 color;  // 0..255 per channel
};

layout(set = 0, binding = 0) readonly buffer Rects {
    Rect rects[];
};

layout(location = 0) flat out uvec4 outColor;

void main() {
    const uint corners[6] = uint[6](0u, 1u, 2u, 2u, 1u, 3u);
    uint draw = uint(gl_VertexIndex) / 6u;
    uint corner = corners[uint(gl_VertexIndex) % 6u];
    Rect rect = rects[draw];
    float x = float((corner & 1u) != 0u ? rect.bounds.z : rect.bounds.x);
    float y = float((corner & 2u) != 0u ? rect.bounds.w : rect.bounds.y);
    gl_Position = vec4(x / 32.0 - 1.0, y / 32.0 - 1.0, 0.5, 1.0);
    outColor = rect.color;
}
