"""Build-time code generator for the vkscope layer (reads the Khronos registry, emits C++)."""
