"""``onnx-designer trt set-profile | set-precision | show``: outputs, exit codes 0/1/2, one-line
errors, and the settings in the written file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from helpers.shared import model as shared_model

from designer import cli
from designer.core.trt.settings import read_settings

ROOT = Path(__file__).resolve().parent.parent
LLAMA = shared_model("llama_24l_h64.dynamo.onnx")
SQUEEZENET = shared_model("squeezenet1_0.torchscript.onnx")


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    try:
        code = cli.main([str(a) for a in args])
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, needle: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err, err


@pytest.mark.parametrize("verb", ["set-profile", "set-precision", "show"])
def test_help(verb: str) -> None:
    result = run("trt", verb, "--help")
    assert result.returncode == 0 and f"onnx-designer trt {verb}" in result.stdout


def first_matmuls(count: int) -> list[str]:
    model = onnx.load(LLAMA, load_external_data=False)
    return [n.name for n in model.graph.node if n.op_type == "MatMul"][:count]


def test_profiles_precisions_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    code, out, err = main(
        capsys, "trt", "set-profile", LLAMA, a,
        "--shape", "input_ids:1x1:2x8:8x512", "--shape", "attention_mask:1x1:2x8:8x512",
        "--profile",
        "--shape", "input_ids:1x1:1x1:1x1", "--shape", "attention_mask:1x1:1x1:1x1",
    )  # fmt: skip
    assert code == 0 and f"saved {a}" in out and not err  # like fp16, sanitize, cast
    m0, m1 = first_matmuls(2)
    code, _out, _err = main(
        capsys, "trt", "set-precision", a, b, "--node", f"{m0}=fp16", "--node", f"{m1}=INT8",
        "--output-type", f"{m0}=fp32",
    )  # fmt: skip
    assert code == 0
    settings = read_settings(onnx.load(b))
    assert settings.precisions == {m0: "fp16", m1: "int8"}
    assert settings.output_types == {m0: ("fp32",)}
    assert [p.shapes["input_ids"].max for p in settings.profiles] == [(8, 512), (1, 1)]

    code, out, _err = main(capsys, "trt", "show", b)
    assert code == 0
    assert "optimization profiles: 2" in out and "min 1x1  opt 2x8  max 8x512" in out
    assert f"{m0}  fp16" in out and f"{m0}  fp32" in out
    code, out, _err = main(capsys, "trt", "show", b, "--json")
    payload = json.loads(out)
    assert code == 0 and payload["version"] == 1 and payload["inputs_without_profile"] == []
    assert payload["precisions"] == {m0: "fp16", m1: "int8"}
    assert payload["dynamic_inputs"]["input_ids"] == ["batch", "seq"]

    # none clears one node; --clear clears every node
    c = tmp_path / "c.onnx"
    assert main(capsys, "trt", "set-precision", b, c, "--node", f"{m1}=none")[0] == 0
    assert read_settings(onnx.load(c)).precisions == {m0: "fp16"}
    assert main(capsys, "trt", "set-precision", c, c, "--clear")[0] == 0
    cleared = read_settings(onnx.load(c))
    assert cleared.precisions == {} and cleared.output_types == {}
    assert len(cleared.profiles) == 2


def test_append_index_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.onnx"
    shape = "input:1x3x224x224:2x3x224x224:4x3x224x224"
    assert main(capsys, "trt", "set-profile", SQUEEZENET, out, "--shape", shape)[0] == 0
    one = "input:1x3x224x224:1x3x224x224:1x3x224x224"
    assert main(capsys, "trt", "set-profile", out, out, "--append", "--shape", one)[0] == 0
    assert len(read_settings(onnx.load(out)).profiles) == 2
    eight = "input:8x3x224x224:8x3x224x224:8x3x224x224"
    assert main(capsys, "trt", "set-profile", out, out, "--index", "0", "--shape", eight)[0] == 0
    profiles = read_settings(onnx.load(out)).profiles
    assert [p.shapes["input"].opt[0] for p in profiles] == [8, 1]
    code, _o, err = main(capsys, "trt", "set-profile", out, out, "--index", "5", "--shape", one)
    assert code == 1
    one_line(err, "there is no optimization profile 5 (the model has 2)")
    assert main(capsys, "trt", "set-profile", out, out, "--clear")[0] == 0
    assert read_settings(onnx.load(out)).profiles == ()
    code, _o, err = main(capsys, "trt", "set-profile", out, out, "--clear")
    assert code == 1
    one_line(err, "has no TensorRT optimization profiles to clear")


def test_partial_profile_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.onnx"
    code, _o, err = main(
        capsys, "trt", "set-profile", LLAMA, out, "--shape", "input_ids:1x1:2x8:8x512"
    )
    assert code == 0 and err.strip() == (  # the README's form of a warning, on stderr
        "onnx-designer: warning: dynamic input(s) missing from a profile: attention_mask"
    )
    code, text, _e = main(capsys, "trt", "show", out)
    assert "dynamic inputs without a profile: attention_mask" in text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--shape", "input:1x3x224x224:4x3x224x224:2x3x224x224"], "need min ≤ opt ≤ max"),
        (["--shape", "input:1x1x224x224:1x1x224x224:1x1x224x224"], "dim 1 is fixed at 3"),
        (["--shape", "pixels:1:1:1"], "'pixels' is not a top-level input"),
    ],
)
def test_set_profile_refusals(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.onnx"
    code, _o, err = main(capsys, "trt", "set-profile", SQUEEZENET, out, *args)
    assert code == 1 and not out.exists()
    one_line(err, needle)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--shape", "input:1x3"],
        ["--shape", "input:1x3:a:b"],
        ["--clear", "--shape", "input:1:1:1"],
        ["--index", "0", "--shape", "a:1:1:1", "--profile", "--shape", "a:1:1:1"],
        ["--shape", "input:1:1:1", "--shape", "input:1:1:1"],
    ],
)
def test_set_profile_usage_errors(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _o, err = main(capsys, "trt", "set-profile", SQUEEZENET, tmp_path / "x.onnx", *args)
    assert code == 2 and "usage:" in err


def test_set_precision_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never.onnx"
    (m0,) = first_matmuls(1)
    for args, needle in [
        (["--node", "nope=fp16"], "no node named 'nope' in the main graph"),
        (["--node", f"{m0}=fp17"], "unknown precision 'fp17'"),
        (["--output-type", f"{m0}=fp16,fp16"], "has 1 output; give 1 type, not 2"),
        (["--clear"], "has no layer precisions to clear"),
    ]:
        code, _o, err = main(capsys, "trt", "set-precision", LLAMA, out, *args)
        assert code == 1 and not out.exists(), args
        one_line(err, needle)
    code, _o, err = main(capsys, "trt", "set-precision", LLAMA, out, "--node", "justaname")
    assert code == 2 and "NODE=PRECISION" in err
    code, _o, err = main(capsys, "trt", "set-precision", LLAMA, out)
    assert code == 2


def test_show_corrupt_and_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _e = main(capsys, "trt", "show", SQUEEZENET)
    assert code == 0 and "optimization profiles: 0" in out
    assert "dynamic inputs without a profile: input" in out
    model = onnx.load(SQUEEZENET)
    model.metadata_props.add(key="onnx_designer.tensorrt", value="{broken")
    bad = tmp_path / "bad.onnx"
    onnx.save(model, bad)
    code, _o, err = main(capsys, "trt", "show", bad)
    assert code == 1
    one_line(err, "metadata 'onnx_designer.tensorrt' is not JSON")
