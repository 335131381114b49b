// SPIR-V compiled from ../shaders at build time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wl {

struct Spirv {
    const uint32_t* code;
    size_t bytes;
};

namespace spirv {
Spirv rectVert();
Spirv rectMultiviewVert();
Spirv colorFrag();
Spirv fullscreenVert();
Spirv invertFrag();
Spirv lcgSpecComp();  // local_size_x from specialization constant 0
Spirv lcgFixedComp(); // local_size_x = 64 literal
Spirv lcgBaseComp();  // as lcgFixedComp, for pipelines created with DISPATCH_BASE_BIT
Spirv addComp();
Spirv transformComp();
Spirv indirectRectVert(); // rect.vert with rectangles from a table, for indirect draws
Spirv indirectArgsComp();
Spirv traceRgen(); // ray tracing stages, SPIR-V 1.5 (Vulkan 1.2)
Spirv traceRmiss();
Spirv traceRchit();
Spirv meshGroupsTask(); // task and mesh stages, SPIR-V 1.5 (Vulkan 1.2)
Spirv meshTriangleMesh();
} // namespace spirv

} // namespace wl
