#version 450
// Never executed: the benchmark only records dispatches, it does not submit them.
layout(local_size_x = 1) in;
void main() {}
