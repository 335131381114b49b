"""What `vkscope demo` captures (the workload program's game scenario): its frames, and the passes
it records in each, for the demo's tests (test_demo.py, test_demo_page.py)."""

from __future__ import annotations

FRAMES = 5
PASSES = ("Particles", "Upload", "Shadows", "GBuffer", "Lighting", "PostProcess", "Readback")
# What the game scenario records in each pass (workloads/src/scenarios/game.cpp).
PASS_TYPES = {
    "Particles": ["dispatch", "dispatch"],
    "Upload": ["buffer_transfer", "buffer_transfer"],
    "Shadows": ["renderpass"],
    "GBuffer": ["renderpass"],
    "Lighting": ["renderpass"],
    "PostProcess": ["dispatch", "dispatch"],
    "Readback": ["image_transfer"] * 3 + ["buffer_transfer"] * 2,
}
