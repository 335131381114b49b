#version 450
// Second subpass: reads what the first subpass rendered and writes its complement, so the
// host can check that the input attachment really carried subpass 0's output.
layout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput previous;
layout(location = 0) out vec4 outColor;

void main() {
    outColor = vec4(1.0) - subpassLoad(previous);
}
