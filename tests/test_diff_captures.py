"""vkscope diff on captures made the real way: protocol frames sent to a CaptureServer
(support/diff_scenes.py builds them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from support.diff_scenes import (
    US,
    W,
    by_name,
    capture,
    diff,
    diff_json,
    jitter,
    layer_stream,
    scene,
    served,
    steady,
)


def test_identical_captures_pass(tmp_path: Path) -> None:
    # Recorded anew every frame in one, resubmitted in the other: tagIDs differ throughout,
    # identities do not.
    base = capture(tmp_path / "base.vkscope", scene(), rerecord=True)
    new = capture(tmp_path / "new.vkscope", scene())
    code, text, err = diff(base, new)
    assert (code, err) == (0, "")
    assert "No regression beyond 5% and 3x the noise" in text
    assert "6 matched workloads: 0 slower, 0 faster, 6 within noise" in text
    code, doc = diff_json(base, new)
    assert code == 0 and doc["verdict"] == "no_regression" and doc["exit_code"] == 0
    assert doc["counts"]["matched"] == 6 and not doc["added"] and not doc["removed"]
    assert all(c["status"] == "within_noise" and c["delta_ns"] == 0 for c in doc["changes"])
    assert doc["totals"]["gpu_ns_per_frame"]["base"]["median_ns"] == 1_970 * US


def test_a_workload_twenty_percent_slower_in_every_frame_fails(tmp_path: Path) -> None:
    base = capture(tmp_path / "base.vkscope", scene(blur1=jitter(300, 1, seed=1)))
    new = capture(tmp_path / "new.vkscope", scene(blur1=jitter(360, 1, seed=2)))
    code, text, err = diff(base, new)
    assert (code, err) == (1, "")
    assert "Slower beyond 5% and 3x the noise (1)" in text
    slower = text[text.index("Slower") : text.index("Within the threshold")]
    assert "dispatch #1" in slower and "frame/post/blur" in slower and "+20." in slower
    assert "REGRESSION: 1 workload(s) slower" in text
    code, doc = diff_json(base, new)
    assert code == 1 and doc["verdict"] == "regression" and doc["counts"]["regression"] == 1
    worst = doc["changes"][0]  # sorted by |change|
    assert (worst["type"], worst["labels"], worst["ordinal"]) == (
        "dispatch", ["frame", "post", "blur"], 1)  # fmt: skip
    assert worst["status"] == "regression" and 18 < worst["delta_pct"] < 22
    assert worst["base"]["samples"] == worst["new"]["samples"] == 9
    # Its sibling, same type and scope, is untouched.
    assert by_name(doc["changes"])["dispatch frame/post/blur #0"]["status"] == "within_noise"


def test_a_faster_workload_is_an_improvement_not_a_failure(tmp_path: Path) -> None:
    base = capture(tmp_path / "base.vkscope", scene())
    new = capture(tmp_path / "new.vkscope", scene(shadow=steady(300)))
    code, text, _ = diff(base, new)
    assert code == 0
    assert "Faster beyond 5%" in text and "renderpass #0" in text and "-25.0%" in text
    _, doc = diff_json(base, new)
    assert by_name(doc["changes"])["renderpass frame/shadows #0"]["status"] == "improvement"


def test_jitter_of_four_percent_is_within_noise(tmp_path: Path) -> None:
    noisy = {"gbuffer": jitter(900, 4, seed=10)}
    base = capture(tmp_path / "base.vkscope", scene(**noisy))
    new = capture(tmp_path / "new.vkscope", scene(gbuffer=jitter(900, 4, seed=11)))
    code, doc = diff_json(base, new)
    assert code == 0
    gbuffer = by_name(doc["changes"])["renderpass frame/gbuffer #0"]
    assert gbuffer["status"] == "within_noise" and gbuffer["delta_ns"] != 0
    assert gbuffer["base"]["noise_ns"] > 0 and gbuffer["new"]["noise_ns"] > 0


def test_the_noise_bound_outweighs_a_lower_threshold(tmp_path: Path) -> None:
    # With a 1% threshold, a steady workload 3% slower fails; a workload jittering by 4% in
    # every frame whose median moved 3% does not: 3x its noise is more than the change.
    base = capture(tmp_path / "base.vkscope",
                   scene(gbuffer=jitter(900, 4, seed=20), cull=steady(120)))  # fmt: skip
    new = capture(tmp_path / "new.vkscope",
                  scene(gbuffer=jitter(927, 4, seed=20), cull=steady(123.6)))  # fmt: skip
    code, doc = diff_json(base, new, threshold_pct=1.0)
    assert code == 1
    changes = by_name(doc["changes"])
    gbuffer, cull = changes["renderpass frame/gbuffer #0"], changes["dispatch frame/cull #0"]
    assert gbuffer["delta_pct"] > 1.0 and gbuffer["status"] == "within_noise"
    assert gbuffer["bound_ns"] > abs(gbuffer["delta_ns"])
    assert cull["status"] == "regression" and 2.9 < cull["delta_pct"] < 3.1
    assert doc["settings"] == {
        "metric": "gpu_ns", "threshold_pct": 1.0, "noise_k": 3.0, "min_frames": 3,
    }  # fmt: skip
    # Without the noise term (k = 0), the threshold alone decides.
    _, doc = diff_json(base, new, threshold_pct=1.0, noise_k=0.0)
    assert by_name(doc["changes"])["renderpass frame/gbuffer #0"]["status"] == "regression"


def test_added_and_removed_workloads_are_listed(tmp_path: Path) -> None:
    base = capture(tmp_path / "base.vkscope", scene())
    extra = W("trace_rays", ["frame", "reflections"], steady(30), fields={"width": 960})
    new_scene = [w for w in scene() if w.type != "buffer_transfer"] + [extra]
    new = capture(tmp_path / "new.vkscope", new_scene)
    code, text, _ = diff(base, new)
    assert code == 0  # 30 us added against 50 us removed: nothing got slower
    assert "Added: only in new (1, costliest first)" in text
    assert "trace_rays #0" in text and "frame/reflections" in text
    assert "Removed: only in base (1, costliest first)" in text and "buffer_transfer #0" in text
    code, doc = diff_json(base, new)
    assert [(e["type"], e["labels"]) for e in doc["added"]] == [
        ("trace_rays", ["frame", "reflections"])]  # fmt: skip
    assert doc["added"][0]["new"] == {"frames": 9, "samples": 9, "median_ns": 30_000.0,
                                      "noise_ns": 0.0, "min_ns": 30_000.0, "p90_ns": 30_000.0,
                                      "p99_ns": 30_000.0, "max_ns": 30_000.0}  # fmt: skip
    assert "base" not in doc["added"][0] and "status" not in doc["added"][0]
    assert [(e["type"], e["labels"]) for e in doc["removed"]] == [("buffer_transfer", [])]
    assert doc["counts"]["matched"] == 5
    assert doc["base"]["identities"] == 6 and doc["new"]["identities"] == 6


def test_identity_survives_a_workload_inserted_in_another_label_scope(tmp_path: Path) -> None:
    base = capture(tmp_path / "base.vkscope", scene())
    # New work at the very start of the frame, in a scope of its own, and a render pass in the
    # blur scope (another type than the two dispatches there).
    inserted = [W("dispatch", ["frame", "ui"], steady(20))]
    same_scope = W("renderpass", ["frame", "post", "blur"], steady(10))
    work = scene()
    new = capture(tmp_path / "new.vkscope", [*inserted, *work[:3], same_scope, *work[3:]])
    code, doc = diff_json(base, new)
    assert code == 0
    assert sorted(by_name(doc["added"])) == [
        "dispatch frame/ui #0", "renderpass frame/post/blur #0"]  # fmt: skip
    assert not doc["removed"]
    changes = by_name(doc["changes"])
    assert len(changes) == 6 and all(c["delta_ns"] == 0 for c in changes.values())
    # The two dispatches of the blur scope keep their ordinals, so their costs stay paired.
    assert changes["dispatch frame/post/blur #0"]["new"]["median_ns"] == 200 * US
    assert changes["dispatch frame/post/blur #1"]["new"]["median_ns"] == 300 * US


def test_a_sibling_of_the_same_type_inserted_earlier_shifts_the_ordinals_after_it(
    tmp_path: Path,
) -> None:
    # The documented limit of the identity: ordinals count within (scope, type).
    base = capture(tmp_path / "base.vkscope", scene())
    work = scene()
    early = W("dispatch", ["frame", "post", "blur"], steady(50))
    new = capture(tmp_path / "new.vkscope", [*work[:3], early, *work[3:]])
    _, doc = diff_json(base, new)
    assert sorted(by_name(doc["added"])) == ["dispatch frame/post/blur #2"]
    changes = by_name(doc["changes"])
    assert changes["dispatch frame/post/blur #0"]["new"]["median_ns"] == 50 * US
    assert changes["dispatch frame/post/blur #1"]["new"]["median_ns"] == 200 * US


def test_same_work_on_two_queues_is_two_identities(tmp_path: Path) -> None:
    def work(async_us: float) -> list[W]:
        return [W("dispatch", ["sim"], steady(100), queue=0),
                W("dispatch", ["sim"], steady(async_us), queue=1)]  # fmt: skip

    base = capture(tmp_path / "base.vkscope", work(100), queues=2)
    new = capture(tmp_path / "new.vkscope", work(150), queues=2)
    code, doc = diff_json(base, new)
    assert code == 1
    status = {(c["queue"], c["ordinal"]): c["status"] for c in doc["changes"]}
    assert status == {("0.0", 0): "within_noise", ("1.0", 0): "regression"}
    code, text, _ = diff(base, new)
    assert "queue" in text and "1.0" in text


def test_min_frames_is_respected(tmp_path: Path) -> None:
    base = capture(tmp_path / "base.vkscope", scene(), frames=2)
    new = capture(tmp_path / "new.vkscope", scene(blur1=steady(360)), frames=2)
    code, doc = diff_json(base, new)
    assert code == 0  # slower, but two frames are not enough to say so
    blur1 = by_name(doc["changes"])["dispatch frame/post/blur #1"]
    assert blur1["status"] == "too_few_frames" and blur1["delta_pct"] == 20.0
    assert blur1["bound_ns"] is None
    assert doc["totals"]["gpu_ns_per_frame"]["status"] == "too_few_frames"
    code, text, _ = diff(base, new)
    assert "Not judged: fewer than 3 timed frames in a capture (6)" in text
    code, doc = diff_json(base, new, min_frames=2)
    assert code == 1 and by_name(doc["changes"])["dispatch frame/post/blur #1"]["status"] == (
        "regression")  # fmt: skip


def test_only_timed_frames_count_as_samples(tmp_path: Path) -> None:
    # Timed in frames 0-1 only in the new capture: matched in all 9 frames, costed in 2.
    def late(frame: int) -> int | None:
        return 360 * US if frame < 2 else None

    base = capture(tmp_path / "base.vkscope", scene())
    new = capture(tmp_path / "new.vkscope", scene(blur1=late))
    code, doc = diff_json(base, new)
    assert code == 0
    blur1 = by_name(doc["changes"])["dispatch frame/post/blur #1"]
    assert blur1["new"] == {"frames": 9, "samples": 2, "median_ns": 360_000.0, "noise_ns": 0.0,
                            "min_ns": 360_000.0, "p90_ns": 360_000.0, "p99_ns": 360_000.0,
                            "max_ns": 360_000.0}  # fmt: skip
    assert blur1["status"] == "too_few_frames"


def test_untimed_workloads_are_matched_but_not_costed(tmp_path: Path) -> None:
    work = [*scene(), W("image_transfer", ["upload"], lambda _f: None)]
    base = capture(tmp_path / "base.vkscope", work)
    new = capture(tmp_path / "new.vkscope", work)
    code, doc = diff_json(base, new)
    assert code == 0 and doc["counts"]["untimed"] == 1
    upload = by_name(doc["changes"])["image_transfer upload #0"]
    assert upload["status"] == "untimed" and upload["delta_ns"] is None
    nothing = dict.fromkeys(("median_ns", "noise_ns", "min_ns", "p90_ns", "p99_ns", "max_ns"))
    assert upload["base"] == {"frames": 9, "samples": 0, **nothing}
    assert doc["changes"][-1] == upload  # no change to sort by: last


def test_the_frame_total_gates_too(tmp_path: Path) -> None:
    # Nothing matched got slower, but a costly new pass makes every frame 50% longer.
    base = capture(tmp_path / "base.vkscope", scene())
    new = capture(tmp_path / "new.vkscope",
                  [*scene(), W("renderpass", ["frame", "taa"], steady(985))])  # fmt: skip
    code, text, _ = diff(base, new)
    assert code == 1
    assert "REGRESSION: GPU time per frame up" in text
    _, doc = diff_json(base, new)
    total = doc["totals"]["gpu_ns_per_frame"]
    assert total["status"] == "regression" and total["delta_pct"] == 50.0
    assert doc["counts"]["regression"] == 0 and doc["verdict"] == "regression"


def test_several_processes_in_one_capture(tmp_path: Path) -> None:
    # Two connections, each with frames 0-8: their frames are separate samples.
    one, two = layer_stream(scene(), 9, pid=1), layer_stream(scene(), 9, pid=2)
    base = served(tmp_path / "base.vkscope", one, two)
    slower = layer_stream(scene(blur1=steady(360)), 9, pid=2)
    new = served(tmp_path / "new.vkscope", one, slower)
    code, doc = diff_json(base, new)
    assert doc["base"]["frames"] == doc["new"]["frames"] == 18
    blur1 = by_name(doc["changes"])["dispatch frame/post/blur #1"]
    assert blur1["base"]["samples"] == blur1["base"]["frames"] == 18
    # Half the new frames are 20% slower: the median moves half-way (+10%), and the spread
    # that opens up (every frame 30 us from the median) is noise the change does not clear.
    assert blur1["delta_pct"] == 10.0 and blur1["new"]["noise_ns"] == 44_478.0  # 1.4826 * 30 us
    assert (code, blur1["status"]) == (0, "within_noise")


def test_a_counter_metric_judges_counter_changes(tmp_path: Path) -> None:
    def shaded(fragments: int) -> Callable[[int], dict[str, float]]:
        return lambda frame: {"fragment_shader_invocations": fragments + frame % 2}

    work = scene()
    base_work = [W(w.type, w.labels, w.ns, w.queue, w.fields, shaded(4096)) for w in work]
    # The same GPU times; the shadow pass shades twice as many fragments.
    new_work = [
        W(w.type, w.labels, w.ns, w.queue, w.fields,
          shaded(8192 if w.labels == ["frame", "shadows"] else 4096))
        for w in work
    ]  # fmt: skip
    base = capture(tmp_path / "base.vkscope", base_work)
    new = capture(tmp_path / "new.vkscope", new_work)
    assert diff(base, new)[0] == 0  # GPU time: no change
    code, text, err = diff(base, new, metric="fragment_shader_invocations")
    assert code == 1, text + err
    assert "Higher in fragment_shader_invocations" in text and "4,096" in text
    assert "REGRESSION: 1 workload(s) higher" in text
    code, doc = diff_json(base, new, metric="fragment_shader_invocations")
    assert code == 1 and doc["settings"]["metric"] == "fragment_shader_invocations"
    (change,) = [c for c in doc["changes"] if c["status"] == "regression"]
    assert change["labels"] == ["frame", "shadows"]
    assert change["delta_ns"] == 4096  # the counter's change, in the fields of GPU times
    code, _, err = diff(base, new, metric="vertex_shader_invocations")
    assert code == 2 and "no values of counter 'vertex_shader_invocations'" in err
    code, _, err = diff(base, new, metric="drop table")
    assert code == 2 and "gpu_ns or a counter name" in err


def test_warm_up_frames_are_left_out_and_the_tail_is_shown(tmp_path: Path) -> None:
    # NEW's first frame draws its shadows ten times slower (pipelines compiling): the rule leaves
    # it out, so its distribution is that of the steady frames; --warmup 0 counts it.
    def slow_start(frame: int) -> int | None:
        return 4_000 * US if frame == 0 else 400 * US

    base = capture(tmp_path / "base.vkscope", scene())
    new = capture(tmp_path / "new.vkscope", scene(shadow=slow_start))
    code, doc = diff_json(base, new, warmup=None)
    assert code == 0
    assert doc["new"]["warmup"] == {
        "rule": "automatic", "frames": 1, "said": "1 frame left out (0: first frame)",
    }  # fmt: skip
    shadows = by_name(doc["changes"])["renderpass frame/shadows #0"]
    assert shadows["new"]["samples"] == 8 and shadows["new"]["max_ns"] == 400 * US
    code, doc = diff_json(base, new, warmup=0)
    shadows = by_name(doc["changes"])["renderpass frame/shadows #0"]
    assert shadows["new"]["samples"] == 9 and shadows["new"]["max_ns"] == 4_000 * US
    # p99 of 9 frames: 0.92 of the way from the 8th value to the 9th.
    assert shadows["new"]["p99_ns"] == 400 * US + 0.92 * 3_600 * US
    assert shadows["base"]["p99_ns"] == 400 * US and shadows["status"] == "within_noise"
    _, text, _ = diff(base, new, warmup=None, width=160)
    assert "warm-up (new): 1 frame left out (0: first frame)" in text
    assert "p99 base" in text and "p99 new" in text
