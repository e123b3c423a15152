"""E-1/E-3 reports from real ORT profiles (fixtures and profiled here) and the TensorRT
10.16 / TREx fixtures: every report is written and parses, totals agree with the profile,
the iteration range changes the numbers as it should."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from designer.activities.analysis import analyze, compute_stats, load_profile
from designer.activities.analysis.profile import NotAProfileError
from designer.activities.analysis.reports import REPORTS
from tests.activities.analysis_helpers import profile_model
from tests.helpers.shared import ORT_FIXTURES, TREX, TRT_SAMPLES, model

OPT_ALL = next(ORT_FIXTURES.glob("tiny_cnn_opt-all_*.json"))
OPT_OFF = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_*.json"))
TINY = ORT_FIXTURES / "tiny_cnn.onnx"
RESNET = TREX / "examples" / "pytorch" / "resnet" / "A100"
TRT_LOG = TRT_SAMPLES / "result-05.log"  # TensorRT 10.16.1 --dumpProfile
TRT_LAYERS = TRT_SAMPLES / "result-04.log"  # the same engine's --dumpLayerInfo


def _raw_node_total(profile: Path, runs: set[int]) -> float:
    """Sum of the node events' durations inside the given model_run indices, read
    straight from the JSON (independent of the parser under test)."""
    events = json.loads(profile.read_text())
    starts = sorted(
        (e["ts"], e["dur"])
        for e in events
        if e.get("cat") == "Session" and e["name"] == "model_run"
    )
    total = 0.0
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            for k, (ts, dur) in enumerate(starts):
                if k in runs and ts <= e["ts"] <= ts + dur:
                    total += e["dur"]
    return total


def _check_written(folder: Path, name: str, detail_total: float, rel: float = 1e-9) -> None:
    for report in REPORTS:
        with (folder / f"{name}_{report}.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
        data = json.loads((folder / f"{name}_{report}.json").read_text())
        assert data["name"] == report and len(data["rows"]) == len(rows)
    detail = json.loads((folder / f"{name}_detail.json").read_text())["rows"]
    summary = {
        r["metric"]: r["value"]
        for r in json.loads((folder / f"{name}_summary.json").read_text())["rows"]
    }
    ops = json.loads((folder / f"{name}_op_type.json").read_text())["rows"]
    total = sum(r["total_us"] for r in detail)
    assert total == pytest.approx(detail_total, rel=rel)
    assert summary["node_time_total_us"] == pytest.approx(total)
    assert sum(r["total_us"] for r in ops) == pytest.approx(total)
    assert sum(r["percent"] for r in detail) == pytest.approx(100.0)


@pytest.mark.parametrize("profile", [OPT_ALL, OPT_OFF], ids=["opt-all", "opt-disabled"])
def test_ort_fixture_reports_agree_with_the_profile(profile: Path, tmp_path: Path) -> None:
    analysis = analyze(profile, model=TINY)
    written = analysis.write(tmp_path)
    assert len(written) == 2 * len(REPORTS)
    expected = _raw_node_total(profile, {1, 2})  # default range leaves out the warm-up run
    _check_written(tmp_path, analysis.profile.name, expected)
    iterations = json.loads((tmp_path / f"{analysis.profile.name}_iteration.json").read_text())
    assert [r["in_range"] for r in iterations["rows"]] == [0, 1, 1]


def test_iteration_range_changes_the_numbers() -> None:
    profile = load_profile(OPT_OFF, model=onnx.load(TINY))
    everything = compute_stats(profile, 0, 2)
    first = compute_stats(profile, 0, 0)
    last_two = compute_stats(profile, 1, 2)
    assert everything.total_us == pytest.approx(_raw_node_total(OPT_OFF, {0, 1, 2}))
    assert first.total_us == pytest.approx(_raw_node_total(OPT_OFF, {0}))
    assert everything.total_us == pytest.approx(first.total_us + last_two.total_us)
    assert first.total_us > last_two.per_iteration_us  # the warm-up run is the slow one
    assert len(last_two.iterations) == 2 and last_two.iteration_count == 2
    summary = dict(
        (r[0], r[1]) for r in analyze(OPT_OFF, iter_start=0, iter_stop=0).tables()["summary"].rows
    )
    assert summary["iter_start"] == 0 and summary["iterations_in_range"] == 1
    with pytest.raises(ValueError, match="inverted"):
        compute_stats(profile, 2, 1)


def test_key_node_finds_iterations(tmp_path: Path) -> None:
    """Without model_run events (a profile of another tool's runs), iterations start at
    each execution of the key node: the first node of each run gives the same runs."""
    events = json.loads(OPT_OFF.read_text())
    stripped = tmp_path / "no_runs.json"
    stripped.write_text(json.dumps([e for e in events if e.get("name") != "model_run"]))
    auto = load_profile(stripped)
    keyed = load_profile(stripped, key_node="Convolution28")
    runs = load_profile(OPT_OFF)
    assert auto.iteration_source == "first_node" and auto.key_node == "Convolution28"
    assert keyed.iteration_source == "key_node" and len(keyed.iterations) == 3
    for a, b in zip(compute_stats(keyed, 1, 2).nodes, compute_stats(runs, 1, 2).nodes, strict=True):
        assert (a.node.name, a.total_us) == (b.node.name, b.total_us)
    softmax = load_profile(stripped, key_node="Softmax")  # the last node: boundaries shift
    assert len(softmax.iterations) == 3
    # Run 0's nodes before its Softmax lie before the first boundary, outside every iteration.
    assert compute_stats(softmax, 0, 2).total_us < compute_stats(keyed, 0, 2).total_us
    with pytest.raises(NotAProfileError, match="not in the profile"):
        load_profile(stripped, key_node="nope")


def test_profiled_here_optimized_and_not(tmp_path: Path) -> None:
    gpt2 = model("gpt2_6l_h64.torchscript.onnx")
    for optimize in (False, True):
        profile = profile_model(gpt2, tmp_path, optimize=optimize, runs=3)
        analysis = analyze(profile, model=gpt2)
        folder = tmp_path / ("opt" if optimize else "noopt")
        analysis.write(folder)
        _check_written(folder, analysis.profile.name, _raw_node_total(profile, {1, 2}))


def test_tensorrt_10_16_log_reports(tmp_path: Path) -> None:
    analysis = analyze(TRT_LOG, extra=[TRT_LAYERS])
    analysis.write(tmp_path)
    layers = analysis.profile.nodes
    assert len(layers) == 15 and all(n.device == "TensorRT" for n in layers)
    # The Total row of the recorded table: 1529.13 ms over 18362 iterations (its rows are
    # rounded to 0.01 ms, so their sum is 1529.14).
    _check_written(tmp_path, "result-05", 1529.13e3, rel=1e-4)
    summary = {r[0]: r[1] for r in analysis.tables()["summary"].rows}
    assert summary["tensorrt_version"] == "10.16.1"
    assert summary["node_time_per_iteration_us"] == pytest.approx(1529.13e3 / 18362, rel=1e-3)
    with pytest.raises(ValueError, match="no iterations"):
        compute_stats(analysis.profile, 1, 2)


def test_trex_profile_with_timing_iterations(tmp_path: Path) -> None:
    path = RESNET / "fp16" / "resnet.onnx.engine.profile.json"
    profile = load_profile(path)
    assert profile.iteration_source == "timing" and len(profile.iterations) > 100
    assert any(n.kernels for n in profile.nodes) and all(n.precision for n in profile.nodes)
    whole = compute_stats(profile, 0, len(profile.iterations) - 1)
    tail = compute_stats(profile, 100, 199)
    assert len(tail.iterations) == 100
    assert whole.total_us == tail.total_us  # per-layer aggregates: the range does not apply
    it_whole = sorted(i.dur_us for i in whole.iterations)
    it_tail = sorted(i.dur_us for i in tail.iterations)
    assert it_whole != it_tail
    analysis = analyze(path, iter_start=100, iter_stop=199)
    analysis.write(tmp_path, formats=["json"])
    rows = json.loads((tmp_path / "resnet.onnx.engine_kernel.json").read_text())["rows"]
    assert any(r["tensor_core"] == 1 for r in rows)  # FP16 xmma/h1688 kernels
    _check_written_json_only(tmp_path, "resnet.onnx.engine", whole.total_us)


def _check_written_json_only(folder: Path, name: str, total: float) -> None:
    detail = json.loads((folder / f"{name}_detail.json").read_text())["rows"]
    assert sum(r["total_us"] for r in detail) == pytest.approx(total)


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_report_and_errors(tmp_path: Path) -> None:
    done = _cli(
        "report",
        OPT_ALL,
        OPT_OFF,
        "--model",
        TINY,
        "--reports",
        "summary,detail",
        "--formats",
        "csv",
        "--output",
        tmp_path,
        "--iter-start",
        "0",
        "--iter-stop",
        "1",
    )
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 4 and all(n.endswith(("_summary.csv", "_detail.csv")) for n in names)
    bad = _cli("report", TINY)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1
    assert "an ONNX model, not a profile; expected an ONNX Runtime profile JSON" in bad.stderr
    layers = next(TREX.rglob("*.graph.json"))  # a layer JSON is named, with what to do
    wrong = _cli("report", layers)
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1
    assert "a TensorRT layer JSON (--exportLayerInfo), not a profile" in wrong.stderr
    assert "--with" in wrong.stderr and "onnx-designer engine" in wrong.stderr
    assert _cli("report", OPT_ALL, "--iter-start", "9").returncode == 1
    assert _cli("report", OPT_ALL, "--reports", "nope").returncode == 2
    assert _cli("report", OPT_ALL, "--formats", "xml").returncode == 2
