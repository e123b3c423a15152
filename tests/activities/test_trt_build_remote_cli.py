"""``trt build --print-command --target ssh://…`` against the real sshd, with the stand-in there."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from conftest import EXAMPLE, SshEnv

from designer.cli import main
from tests.helpers.trtexec_standin import install_standin, sample_options, write_wrapper


def test_print_command_names_the_targets_trtexec_and_version(
    ssh_env: SshEnv, remote_dir: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ssh_env.connect() as target:
        root = target.resolve(remote_dir)
        standin = install_standin(target, f"{root}/standin")
        wrapper = write_wrapper(
            target, f"{root}/tools/trtexec", standin, f"{root}/standin/fixtures", "11.1"
        )
    url = f"ssh://{ssh_env.user.name}@127.0.0.1:{ssh_env.server.port}"
    common = [
        "--target",
        url,
        "--identity",
        str(ssh_env.key),
        "--known-hosts",
        str(ssh_env.known_hosts),
        "--ssh-config",
        str(tmp_path / "none"),
        "--deploy-dir",
        remote_dir,
        "--trtexec",
        "tools/trtexec",  # relative to the deployment folder
    ]
    args = ["trt", "build", str(EXAMPLE), "--print-command", "--free-dims-as-one", *common]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "TensorRT 11.1.0 found, no GPU" in err
    argv = shlex.split(out.strip())
    assert argv[0] == wrapper
    _, unknown = sample_options.check_arguments(argv[1:], "11.1")
    assert not unknown
    code = main([*args, "--int8"])
    _, err = capsys.readouterr()
    assert code == 1 and "TensorRT 11.1.0 builds strongly typed networks only" in err
