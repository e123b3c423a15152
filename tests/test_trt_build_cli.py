"""``onnx-designer trt build``: --print-command for both versions, refusals, stored settings."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from designer.cli import main
from tests.helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)
from tests.helpers.trtexec_standin import SCRIPT, fixtures_root, sample_options, write_wrapper

EXAMPLE = Path(__file__).resolve().parents[1] / "resources" / "examples" / "tiny_cnn.onnx"


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def accepted(line: str, version: str) -> dict[str, list[str]]:
    argv = shlex.split(line)
    options, unknown = sample_options.check_arguments(argv[1:], version)
    assert not unknown, unknown
    return options


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["trt", "build", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--print-command" in out and "--trt-version" in out and "--typing" in out


@pytest.mark.parametrize("version", ["10.16", "11.1"])
def test_print_command_for_each_version(capsys: pytest.CaptureFixture[str], version: str) -> None:
    code, out, err = cli(
        capsys,
        "trt",
        "build",
        EXAMPLE,
        "--engine",
        "out.engine",
        "--print-command",
        "--trt-version",
        version,
        "--free-dims-as-one",
        "--workspace-mib",
        "256",
        "--opt-level",
        "4",
        "--layer-json",
        "layers.json",
        "--timing-cache",
        "t.cache",
        "--tactic-source",
        "jit_convolutions=off",
    )
    assert code == 0, err
    line = out.strip()
    assert len(out.strip().splitlines()) == 1 and line.startswith("trtexec ")
    parsed = accepted(line, version)
    assert parsed["--saveEngine"] == ["out.engine"]
    assert parsed["--minShapes"] == ["input:1x3x32x32"]
    assert parsed["--memPoolSize"] == ["workspace:256M"]


def test_11_refuses_fp16_with_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["trt", "build", EXAMPLE, "--print-command", "--free-dims-as-one", "--fp16"]
    code, out, err = cli(capsys, *args, "--trt-version", "11.1")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "strongly typed networks only" in err and "onnx-designer fp16" in err
    code, out, _ = cli(capsys, *args, "--trt-version", "10.16")
    assert code == 0 and "--fp16" in accepted(out.strip(), "10.16")


def test_dynamic_input_without_profile_stops(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = cli(
        capsys, "trt", "build", EXAMPLE, "--print-command", "--trt-version", "10.16"
    )
    assert code == 1 and "dynamic input(s) input have no TensorRT optimization profile" in err
    assert "--free-dims-as-one" in err


def test_stored_settings_and_overrides(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with_profile = tmp_path / "p.onnx"
    code, _, err = cli(
        capsys,
        "trt",
        "set-profile",
        EXAMPLE,
        with_profile,
        "--shape",
        "input:1x3x32x32:4x3x32x32:16x3x32x32",
    )
    assert code == 0, err
    code, out, err = cli(
        capsys, "trt", "build", with_profile, "--print-command", "--trt-version", "10.16"
    )
    assert code == 0, err
    parsed = accepted(out.strip(), "10.16")
    assert parsed["--optShapes"] == ["input:4x3x32x32"]
    assert parsed["--maxShapes"] == ["input:16x3x32x32"]
    assert parsed["--saveEngine"] == [str(with_profile.with_suffix(".engine"))]
    code, out, _ = cli(
        capsys,
        "trt",
        "build",
        with_profile,
        "--print-command",
        "--trt-version",
        "10.16",
        "--shape",
        "input:2x3x32x32:2x3x32x32:2x3x32x32",
    )
    assert code == 0 and accepted(out.strip(), "10.16")["--minShapes"] == ["input:2x3x32x32"]
    # A stored precision needs obey/prefer typing, then becomes --layerPrecisions.
    import onnx

    node = onnx.load(str(with_profile)).graph.node[0].name
    with_prec = tmp_path / "q.onnx"
    code, _, err = cli(
        capsys, "trt", "set-precision", with_profile, with_prec, "--node", f"{node}=fp16"
    )
    assert code == 0, err
    base = ["trt", "build", with_prec, "--print-command", "--trt-version", "10.16"]
    code, _, err = cli(capsys, *base)
    assert code == 1 and "'obey' or 'prefer'" in err and "--ignore-layer-precisions" in err
    code, out, _ = cli(capsys, *base, "--typing", "obey")
    parsed = accepted(out.strip(), "10.16")
    assert parsed["--layerPrecisions"] == [f"{node}:fp16"]
    assert parsed["--precisionConstraints"] == ["obey"]
    code, out, _ = cli(capsys, *base, "--ignore-layer-precisions")
    assert code == 0 and "--layerPrecisions" not in accepted(out.strip(), "10.16")
    code, _, err = cli(capsys, *base[:-2], "--trt-version", "11.1", "--typing", "obey")
    assert code == 1 and "TensorRT 11.1 has no layer precisions" in err  # not "obey"


def test_python_builder_preview(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code, out, err = cli(
        capsys,
        "trt",
        "build",
        EXAMPLE,
        "--print-command",
        "--trt-version",
        "11.1",
        "--free-dims-as-one",
        "--typing",
        "strong",
        "--python-builder",
    )
    assert code == 0, err
    settings = json.loads(out)
    assert settings["network_flags"] == ["STRONGLY_TYPED"]
    assert settings["profiles"] == [{"input": [[1, 3, 32, 32]] * 3}]


def test_bad_values(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["trt", "build", EXAMPLE, "--print-command", "--free-dims-as-one"]
    code, _, err = cli(capsys, *base, "--trt-version", "eleven")
    assert code == 1 and "not a TensorRT version" in err
    code, _, err = cli(capsys, *base, "--trt-version", "10.16", "--fp8", "--int8")
    assert code == 1 and "FP8 and INT8" in err
    code, _, err = cli(capsys, *base, "--trt-version", "10.16", "--precision", "x=fp17")
    assert code == 1 and "fp17" in err
    with pytest.raises(SystemExit) as info:
        main([*map(str, base), "--tactic-source", "cudnn=maybe"])
    assert info.value.code == 2
    capsys.readouterr()


def test_print_command_on_this_machine_uses_the_detected_trtexec(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from designer.activities.targets import LocalTarget

    wrapper = write_wrapper(
        LocalTarget(), str(tmp_path / "trt" / "trtexec"), str(SCRIPT), str(fixtures_root()), "11.1"
    )
    args = ["trt", "build", EXAMPLE, "--print-command", "--free-dims-as-one", "--trtexec", wrapper]
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    assert "TensorRT 11.1.0 found" in err
    argv = shlex.split(out.strip())
    assert argv[0] == wrapper
    accepted(out.strip(), "11.1")
    code, out, err = cli(capsys, *args, "--fp16")
    assert code == 1 and "TensorRT 11.1.0 builds strongly typed networks only" in err


@pytest.mark.usefixtures("fake_gpu")
def test_build_runs_on_this_machine(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Without --print-command the activity runs (the stand-in replays the recorded build;
    ``fake_gpu`` lets the probe see a GPU device here)."""
    import json
    import shutil

    from designer.activities.targets import LocalTarget

    wrapper = write_wrapper(
        LocalTarget(), str(tmp_path / "trt" / "trtexec"), str(SCRIPT), str(fixtures_root())
    )
    model = tmp_path / "m.onnx"
    shutil.copy(EXAMPLE, model)
    code, out, err = cli(
        capsys,
        "trt",
        "build",
        model,
        "--free-dims-as-one",
        "--trtexec",
        wrapper,
        "--layer-json",
        tmp_path / "layers.json",
    )
    assert code == 0, err
    assert f"engine: {tmp_path / 'm.engine'}" in out
    assert (tmp_path / "m.engine").read_bytes().startswith(b"trtexec-standin plan\n")
    assert json.loads((tmp_path / "layers.json").read_text())["Layers"]
    code, _, err = cli(
        capsys, "trt", "build", model, "--trtexec", wrapper, "--trt-version", "10.16"
    )
    assert code == 1 and "only previews" in err
