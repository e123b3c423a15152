"""fp16's options tell the truth about what they match: a --block-node name no node has is a
usage error (a typo would leave the node in float16 without a word), a --block-op that no
ONNX operator is named is one too (with the likely name), an operator the model lacks is a
warning; --seed and other counts refuse bad values as usage errors, with a plain message;
a check that could not run names the sizes the user gave among the likely causes."""

from __future__ import annotations

from pathlib import Path

import pytest

from designer.cli import main
from tests.helpers.shared import model

SQUEEZENET = "squeezenet1_0.torchscript.onnx"


def _run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_block_names_that_match_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = model(SQUEEZENET), tmp_path / "o.onnx"
    code, _, err = _run(capsys, "fp16", src, out, "--block-node", "/features/features.0/Cov")
    assert code == 2 and not out.exists()
    assert err.strip() == (
        "onnx-designer: error: --block-node: no node of the model is named "
        "'/features/features.0/Cov' (did you mean '/features/features.0/Conv'?)"
    )
    code, _, err = _run(capsys, "fp16", src, out, "--block-op", "conv")
    assert code == 2 and "'conv' is no ONNX operator (did you mean 'Conv'?)" in err
    code, stdout, err = _run(capsys, "fp16", src, out, "--block-op", "Softmax", "--no-check")
    assert code == 0 and out.exists()
    assert err.strip() == (
        "onnx-designer: warning: --block-op Softmax: the model has no Softmax node; it "
        "blocks nothing"
    )
    code, stdout, _ = _run(
        capsys, "fp16", src, out, "--block-node", "/features/features.0/Conv", "--no-check"
    )
    assert code == 0 and "1 float node(s) kept in float32" in stdout


def test_bad_counts_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = model(SQUEEZENET), tmp_path / "o.onnx"
    code, _, err = _run(capsys, "fp16", src, out, "--seed", "-1")
    assert code == 2 and "argument --seed: -1 is negative: give 0 or more" in err
    code, _, err = _run(capsys, "sanitize", src, out, "--passes", "x")
    assert code == 2 and "argument --passes: 'x' is not a whole number" in err
    assert "_non_negative" not in err
    assert not out.exists()


def test_a_check_that_could_not_run_names_the_sizes_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GPT-2 has 256 positions: seq=2000 is what does not fit, not the batch."""
    src, out = model("gpt2_6l_h64.torchscript.onnx"), tmp_path / "o.onnx"
    code, _, err = _run(capsys, "fp16", src, out, "--check-dim", "seq=2000")
    assert code == 1
    assert "check the sizes given (--check-dim seq=2000)" in err.splitlines()[-1]
