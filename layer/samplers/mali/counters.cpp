#include "counters.hpp"

namespace vkscope::mali {
namespace {

constexpr uint32_t kSum = VKSCOPE_COUNTER_CUMULATIVE;

// Names follow vkscope's counters (snake case, no unit suffix); descriptions say which of Arm's
// counters each one is, so its documentation can be found.
const MaliCounter kCounters[] = {
    {MaliGPUActiveCy,
     {"gpu_active_cycles", "cycles", "cycles the GPU had work (MaliGPUActiveCy)", kSum}},
    {MaliFragActiveCy,
     {"fragment_active_cycles", "cycles",
      "shader core cycles with fragment work, summed over cores (MaliFragActiveCy)", kSum}},
    {MaliNonFragActiveCy,
     {"non_fragment_active_cycles", "cycles",
      "shader core cycles with compute or vertex work, summed over cores (MaliNonFragActiveCy)",
      kSum}},
    {MaliTilerActiveCy,
     {"tiler_active_cycles", "cycles", "cycles the tiler had work (MaliTilerActiveCy)", kSum}},
    {MaliExtBusRdBy,
     {"external_read_bytes", "bytes", "bytes read from external memory (MaliExtBusRdBy)", kSum}},
    {MaliExtBusWrBy,
     {"external_write_bytes", "bytes", "bytes written to external memory (MaliExtBusWrBy)", kSum}},
    {MaliGeomTotalPrim,
     {"input_primitives", "primitives", "primitives the tiler received (MaliGeomTotalPrim)", kSum}},
    {MaliGeomVisiblePrim,
     {"visible_primitives", "primitives", "primitives that survived culling (MaliGeomVisiblePrim)",
      kSum}},
    {MaliGeomTotalCullPrim,
     {"culled_primitives", "primitives",
      "primitives culled before rasterization (MaliGeomTotalCullPrim)", kSum}},
    {MaliFragThread,
     {"fragment_threads", "threads", "fragment shader threads, helpers included (MaliFragThread)",
      kSum}},
    {MaliFragHelpThread,
     {"fragment_helper_threads", "threads",
      "fragment threads started only as derivative helpers (MaliFragHelpThread)", kSum}},
    {MaliNonFragThread,
     {"non_fragment_threads", "threads", "compute and vertex shader threads (MaliNonFragThread)",
      kSum}},
    {MaliFragTile, {"tiles", "tiles", "tiles the fragment stage processed (MaliFragTile)", kSum}},
};

} // namespace

std::span<const MaliCounter> wanted_counters() {
    return kCounters;
}

} // namespace vkscope::mali
