"""``trt build`` with a layer precision stored in the model: the refusal names the way out
that the target's TensorRT has. 10.16 honours layer precisions with typing obey/prefer; 11.1
has none (strongly typed only) and refuses obey, so it must say --ignore-layer-precisions,
not "--typing obey". The version is --trt-version's, or the detected one without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from designer.cli import main
from tests.helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)
from tests.helpers.trtexec_standin import SCRIPT, fixtures_root, write_wrapper

SQUEEZENET = Path("/work/shared/models/squeezenet1_0.torchscript.onnx")
NODE = "/features/features.0/Conv"
NO_LAYER_PRECISIONS = "TensorRT 11.1 has no layer precisions"


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def sq1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """squeezenet with one stored layer precision (``trt set-precision``)."""
    if not SQUEEZENET.is_file():
        pytest.skip(f"{SQUEEZENET} is not here")
    monkeypatch.setenv("ONNX_DESIGNER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRTEXEC_STANDIN_VERSION", raising=False)
    out = tmp_path / "sq1.onnx"
    code, _, err = cli(capsys, "trt", "set-precision", SQUEEZENET, out, "--node", f"{NODE}=fp16")
    assert code == 0, err
    return out


def _assert_obey_message(err: str) -> None:
    assert "'obey' or 'prefer'" in err and "--ignore-layer-precisions" in err, err
    assert "--precision NODE=none" in err and NO_LAYER_PRECISIONS not in err


def _assert_no_layer_precisions(err: str) -> None:
    assert NO_LAYER_PRECISIONS in err and "--ignore-layer-precisions" in err, err
    assert "obey" not in err and "prefer" not in err  # modes 11.1 refuses


def test_preview_for_10_16_names_obey_prefer_and_the_ignore_flag(
    capsys: pytest.CaptureFixture[str], sq1: Path
) -> None:
    base: list[str | Path] = ["trt", "build", sq1, "--print-command", "--free-dims-as-one"]
    code, _, err = cli(capsys, *base, "--trt-version", "10.16")
    assert code == 1
    _assert_obey_message(err)
    code, out, err = cli(capsys, *base, "--trt-version", "10.16", "--typing", "obey")
    assert code == 0 and f"--layerPrecisions={NODE}:fp16" in out, err


def test_preview_for_11_1_says_it_has_no_layer_precisions(
    capsys: pytest.CaptureFixture[str], sq1: Path
) -> None:
    base: list[str | Path] = [
        "trt",
        "build",
        sq1,
        "--print-command",
        "--free-dims-as-one",
        "--trt-version",
        "11.1",
    ]
    code, _, err = cli(capsys, *base)
    assert code == 1
    _assert_no_layer_precisions(err)
    code, out, err = cli(capsys, *base, "--ignore-layer-precisions")  # the way out works
    assert code == 0 and "--layerPrecisions" not in out, err
    code, _, err = cli(capsys, "profile", "trt", *base[2:])  # profile trt shares the check
    assert code == 1
    _assert_no_layer_precisions(err)


@pytest.mark.parametrize("version", ["10.16", "11.1"])
def test_detected_version_picks_the_message(
    capsys: pytest.CaptureFixture[str], sq1: Path, tmp_path: Path, version: str
) -> None:
    """Without --trt-version the check waits for the detected TensorRT (print and run)."""
    from designer.activities.targets import LocalTarget

    wrapper = write_wrapper(
        LocalTarget(), str(tmp_path / "trt" / "trtexec"), str(SCRIPT), str(fixtures_root()), version
    )
    check = _assert_obey_message if version == "10.16" else _assert_no_layer_precisions
    base: list[str | Path] = ["trt", "build", sq1, "--free-dims-as-one", "--trtexec", wrapper]
    code, _, err = cli(capsys, *base, "--print-command")
    assert code == 1
    check(err)
    code, _, err = cli(capsys, *base, "--print-command", "--ignore-layer-precisions")
    assert code == 0, err


@pytest.mark.usefixtures("fake_gpu")
def test_a_run_on_11_1_is_refused_before_trtexec_runs(
    capsys: pytest.CaptureFixture[str], sq1: Path, tmp_path: Path
) -> None:
    from designer.activities.targets import LocalTarget

    wrapper = write_wrapper(
        LocalTarget(), str(tmp_path / "trt" / "trtexec"), str(SCRIPT), str(fixtures_root()), "11.1"
    )
    engine = tmp_path / "sq1.engine"
    code, _out, err = cli(
        capsys, "trt", "build", sq1, "--free-dims-as-one", "--trtexec", wrapper, "--engine", engine
    )
    assert code == 1 and not engine.exists() and "log:" not in err
    _assert_no_layer_precisions(err)


@pytest.mark.parametrize("version", ["10.16", "11.1"])
def test_profile_trt_waits_for_the_detected_version_too(
    capsys: pytest.CaptureFixture[str], sq1: Path, tmp_path: Path, version: str
) -> None:
    """`profile trt` builds the model first: its precision message follows the detected
    TensorRT as `trt build`'s does (it gave the 10.x wording on an 11.x target)."""
    from designer.activities.targets import LocalTarget

    wrapper = write_wrapper(
        LocalTarget(), str(tmp_path / "trt" / "trtexec"), str(SCRIPT), str(fixtures_root()), version
    )
    check = _assert_obey_message if version == "10.16" else _assert_no_layer_precisions
    base: list[str | Path] = ["profile", "trt", sq1, "--free-dims-as-one", "--trtexec", wrapper]
    code, _, err = cli(capsys, *base, "--print-command")
    assert code == 1
    check(err)
    code, _, err = cli(capsys, *base, "--print-command", "--ignore-layer-precisions")
    assert code == 0, err
