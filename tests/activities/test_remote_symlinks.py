"""The upload list for an SSH target follows external data only inside the model's folder
(issue 11 point 4): a data file that is a link to a file elsewhere is refused before
anything is copied; a link that stays inside is uploaded (a real sshd on loopback)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
from conftest import SshEnv
from helpers.models import weights_model

from designer.activities.runner import OrtProfileOptions, run_ort_profile


def _model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    arrays = {"w": np.arange(512, dtype=np.float32)}
    onnx.save(
        weights_model(arrays),
        folder / "m.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    return folder / "m.onnx"


def test_remote_upload_refuses_a_link_out_and_follows_one_inside(
    ssh_env: SshEnv, deployed: str, tmp_path: Path
) -> None:
    secret = _model(tmp_path / "private").parent / "weights.bin"
    leaking = _model(tmp_path / "leaking")
    (leaking.parent / "weights.bin").unlink()
    os.symlink(secret, leaking.parent / "weights.bin")
    inside = _model(tmp_path / "inside")
    (inside.parent / "weights.bin").rename(inside.parent / "real.bin")
    os.symlink("real.bin", inside.parent / "weights.bin")

    with ssh_env.connect() as target:
        refused = run_ort_profile(
            target,
            OrtProfileOptions(leaking, iterations=1, warmup=0, output=tmp_path / "a.json"),
            deploy_dir=deployed,
        )
        fine = run_ort_profile(
            target,
            OrtProfileOptions(inside, iterations=1, warmup=0, output=tmp_path / "b.json"),
            deploy_dir=deployed,
        )
    assert refused.status == "failed"
    assert refused.error is not None and "outside the model folder" in refused.error
    assert "tensor 'w'" in refused.error and "\n" not in refused.error
    assert refused.copied == []
    assert fine.status == "ok", fine.error
    assert sorted(Path(p).name for p in fine.copied) == ["m.onnx", "weights.bin"]
