"""Three defects of the TensorRT commands: Ctrl+C during a run, ``profile trt --use-engine``
with build flags, ``trt build --precision NODE=none``.

The runs use the stand-in trtexec (real TensorRT 10.16 output and option parser); Ctrl+C is a
real SIGINT sent to the main thread while the command waits for its worker.
"""

from __future__ import annotations

import argparse
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import onnx
import pytest
from helpers.trt_fixtures import (
    EXAMPLE,
    STANDIN,
    cli_model,  # noqa: F401 (the fixture model)
)
from helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)
from helpers.trtexec_standin import sample_options

from designer.cli import main
from designer.commands import activity_commands
from designer.commands.trt_build_verbs import add_build_arguments
from designer.commands.trt_profile_cli import ENGINE_FLAGS
from designer.core.errors import DesignerError

NODE = "conv1"


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# --- 1. Ctrl+C ------------------------------------------------------------------------------


@pytest.fixture
def ctrl_c() -> Iterator[Callable[[Callable[[], bool]], None]]:
    """``ctrl_c(ready)``: send SIGINT to the main thread once ``ready()`` is true (polled on a
    helper thread, for at most 20 s). Never fires after the test has ended."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    stop = threading.Event()
    lock = threading.Lock()
    main_id = threading.main_thread().ident
    assert main_id is not None and threading.current_thread() is threading.main_thread()

    def arm(ready: Callable[[], bool]) -> None:
        def watch() -> None:
            deadline = time.monotonic() + 20
            while not stop.is_set() and time.monotonic() < deadline:
                if ready():
                    with lock:
                        if not stop.is_set():
                            signal.pthread_kill(main_id, signal.SIGINT)
                    return
                time.sleep(0.05)

        threading.Thread(target=watch, daemon=True).start()

    try:
        yield arm
    finally:
        with lock:
            stop.set()
        signal.signal(signal.SIGINT, previous)


def _running(log: Path) -> Callable[[], bool]:
    """True once the activity has started trtexec (its log names the TensorRT it found)."""
    started: list[float] = []

    def ready() -> bool:
        if not started and log.is_file() and "TensorRT 10.16" in log.read_text(errors="replace"):
            started.append(time.monotonic())
        return bool(started) and time.monotonic() - started[0] > 0.5

    return ready


@pytest.mark.usefixtures("fake_gpu")
@pytest.mark.parametrize(
    ("verb", "log_name"),
    [(("trt", "build"), "tiny.build.log"), (("profile", "trt"), "tiny.trt-profile.log")],
)
def test_ctrl_c_says_cancelled_and_names_the_kept_log(
    model: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    ctrl_c: Callable[[Callable[[], bool]], None],
    verb: tuple[str, str],
    log_name: str,
) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_DELAY", "20")
    log = model.parent / log_name
    ctrl_c(_running(log))
    start = time.monotonic()
    code, out, err = cli(capsys, *verb, model, "--free-dims-as-one", "--trtexec", STANDIN)
    assert time.monotonic() - start < 15, "trtexec was not stopped"
    assert code == activity_commands.CANCELLED_EXIT == 1, err
    assert err == f"onnx-designer: cancelled by the user (log kept: {log})\n"
    assert out == ""
    assert log.read_text().splitlines()[-1] == "error: cancelled by the user"


def test_run_cancellable_waits_for_the_cancelled_result(
    ctrl_c: Callable[[Callable[[], bool]], None],
) -> None:
    started = threading.Event()

    def work(token: Any) -> str:
        started.set()
        return "stopped" if token.wait(10) else "ran to the end"

    ctrl_c(started.is_set)
    assert activity_commands._run_cancellable(work) == "stopped"


def test_run_that_ignores_cancel_is_an_error_saying_what_to_do(
    monkeypatch: pytest.MonkeyPatch, ctrl_c: Callable[[Callable[[], bool]], None]
) -> None:
    monkeypatch.setattr(activity_commands, "CANCEL_GRACE_S", 0.3)
    started = threading.Event()

    def work(token: Any) -> str:
        started.set()
        time.sleep(2)
        return "too late"

    ctrl_c(started.is_set)
    with pytest.raises(DesignerError, match=r"did not stop within 0\.3 s.*check it and end it"):
        activity_commands._run_cancellable(work)


def test_ctrl_c_during_profile_ort_names_the_partial_profile(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    ctrl_c: Callable[[Callable[[], bool]], None],
) -> None:
    from designer.activities import runner

    partial = tmp_path / "tiny.ort-profile.json"
    started = threading.Event()

    def fake_run(target: Any, options: Any, **kwargs: Any) -> Any:
        started.set()
        assert kwargs["cancel"].wait(10)
        return runner.ActivityResult("cancelled", partial, [], "cancelled by the user")

    monkeypatch.setattr(runner, "run_ort_profile", fake_run)
    ctrl_c(started.is_set)
    code, out, err = cli(capsys, "profile", "ort", EXAMPLE)
    assert code == 1 and out == ""
    assert err == f"onnx-designer: cancelled by the user (partial profile kept: {partial})\n"


# --- 2. profile trt --use-engine with build flags -------------------------------------------

# One non-default use of every `trt build` flag that changes the trtexec command line.
EXAMPLES: dict[str, list[str]] = {
    "typing": ["--typing", "strong"],
    "no_tf32": ["--no-tf32"],
    "fp16": ["--fp16"],
    "bf16": ["--bf16"],
    "int8": ["--int8"],
    "fp8": ["--fp8"],
    "precision": ["--typing", "obey", "--precision", f"{NODE}=fp16"],
    "sparsity": ["--sparsity"],
    "tactic_source": ["--tactic-source", "jit_convolutions=off"],
    "plugin_instance_norm": ["--plugin-instance-norm"],
    "opt_level": ["--opt-level", "5"],
    "max_aux_streams": ["--max-aux-streams", "2"],
    "hardware_compat": ["--hardware-compat", "ampere+"],
    "version_compatible": ["--version-compatible"],
    "workspace_mib": ["--workspace-mib", "512"],
    "calib": ["--int8", "--calib", "c.cache"],
    "weights": ["--weights", "refit"],
    "timing_cache": ["--timing-cache", "t.cache"],
    "profiling_verbosity": ["--profiling-verbosity", "none"],
    "layer_json": ["--layer-json", "l.json"],
    "device": ["--device", "1"],
    "plugin": ["--plugin", "libp.so"],
    "dynamic_plugin": ["--dynamic-plugin", "libd.so"],
    "trt_verbose": ["--trt-verbose"],
}
# Flags that only say which shapes or stored precisions to use (checked on their own below).
SETTINGS_FLAGS = {"shape", "free_dims_as_one", "ignore_layer_precisions"}


def _build_option_flags(version: str) -> set[str]:
    """The flags trtexec's ``BuildOptions::parse`` reads, from the real sampleOptions.cpp
    (TensorRT ignores them all with --loadEngine)."""
    text = sample_options.source_path(version).read_text()
    start = text.index("void BuildOptions::parse(Arguments& arguments)")
    end = text.index("::parse(Arguments& arguments)", start + 50)
    return set(re.findall(r'"(--[A-Za-z0-9]+)"', text[start:end]))


def test_every_build_flag_is_classified() -> None:
    parser = argparse.ArgumentParser(add_help=False)
    add_build_arguments(parser)
    dests = {action.dest for action in parser._actions}
    assert dests == set(EXAMPLES) | SETTINGS_FLAGS
    assert SETTINGS_FLAGS < ENGINE_FLAGS <= dests


@pytest.mark.parametrize("dest", sorted(EXAMPLES))
def test_use_engine_refuses_exactly_the_build_only_flags(
    model: Path, capsys: pytest.CaptureFixture[str], dest: str
) -> None:
    preview = ["--free-dims-as-one", "--print-command", "--trt-version", "10.16"]
    code, base, err = cli(capsys, "trt", "build", model, *preview)
    assert code == 0, err
    code, line, err = cli(capsys, "trt", "build", model, *preview, *EXAMPLES[dest])
    assert code == 0, err
    added = set(line.split()) - set(base.split())
    keys = {arg.split("=", 1)[0] for arg in added}
    build_only = _build_option_flags("10.16")
    assert keys and (keys <= build_only or not keys & build_only), keys

    use = ["--use-engine", model.parent / "x.engine"]
    code, out, err = cli(capsys, "profile", "trt", model, *use, *preview, *EXAMPLES[dest])
    if keys <= build_only:
        assert code == 2 and out == "", out
        assert err.startswith("onnx-designer: error: ") and err.count("\n") == 1
        for flag in (a for a in EXAMPLES[dest] if a.startswith("--")):
            assert flag in err.split(" only apply")[0]
        assert "drop them, or drop --use-engine" in err
    else:  # a system or reporting option: it goes on the --loadEngine command line
        assert code == 0, err
        assert added <= set(out.split()) and "--loadEngine=" in out


def test_use_engine_names_every_refused_flag_and_save_engine(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(
        capsys, "profile", "trt", model, "--use-engine", "x.engine", "--free-dims-as-one",
        "--fp16", "--workspace-mib", "512", "--opt-level", "5", "--timing-cache", "t.cache",
        "--save-engine", "y.engine", "--print-command", "--trt-version", "10.16",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert err.startswith(
        "onnx-designer: error: --fp16, --opt-level, --workspace-mib, --timing-cache,"
        " --save-engine only apply when an engine is built"
    )


def test_use_engine_takes_shapes_not_the_stored_precisions(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = tmp_path / "stored.onnx"
    code, _, err = cli(
        capsys, "trt", "set-precision", model, stored, "--node", f"{NODE}=fp16",
        "--output-type", f"{NODE}=fp16",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = cli(
        capsys, "profile", "trt", stored, "--use-engine", "x.engine", "--print-command",
        "--trt-version", "10.16", "--shape", "input:2x3x32x32:4x3x32x32:8x3x32x32",
    )  # fmt: skip
    assert code == 0, err
    parsed, unknown = sample_options.check_arguments(out.split()[1:], "10.16")
    assert not unknown
    assert parsed["--shapes"] == ["input:4x3x32x32"]
    assert "--layerPrecisions" not in parsed and "--layerOutputTypes" not in parsed


# --- 3. trt build --precision NODE=none -----------------------------------------------------


def test_precision_none_keeps_the_output_types_like_set_precision(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = tmp_path / "stored.onnx"
    code, _, err = cli(
        capsys, "trt", "set-precision", model, stored, "--node", f"{NODE}=fp16",
        "--output-type", f"{NODE}=fp16",
    )  # fmt: skip
    assert code == 0, err
    cleared = tmp_path / "cleared.onnx"
    code, _, err = cli(capsys, "trt", "set-precision", stored, cleared, "--node", f"{NODE}=none")
    assert code == 0, err
    preview = ["--typing", "obey", "--free-dims-as-one", "--print-command", "--trt-version"]
    engine = ["--engine", tmp_path / "m.engine"]
    code, with_flag, err = cli(
        capsys, "trt", "build", stored, *engine, *preview, "10.16", "--precision", f"{NODE}=none"
    )
    assert code == 0, err
    code, from_model, err = cli(capsys, "trt", "build", cleared, *engine, *preview, "10.16")
    assert code == 0, err
    parsed, _ = sample_options.check_arguments(with_flag.split()[1:], "10.16")
    assert parsed["--layerOutputTypes"] == [f"{NODE}:fp16"]
    assert "--layerPrecisions" not in parsed
    assert with_flag.replace(str(stored), "M") == from_model.replace(str(cleared), "M")


def test_with_model_settings_clears_only_the_precision(model: Path, tmp_path: Path) -> None:
    from designer.activities.trt.model_settings import with_model_settings
    from designer.activities.trt.options import TrtBuildOptions

    stored = tmp_path / "stored.onnx"
    assert main(
        ["trt", "set-precision", str(model), str(stored), "--node", f"{NODE}=fp16",
         "--node", "conv2=int8", "--output-type", f"{NODE}=fp16"]
    ) == 0  # fmt: skip
    options = with_model_settings(
        TrtBuildOptions(model=str(stored), typing="obey"),
        onnx.load(str(stored)),
        free_dims_as_one=True,
        cleared_precisions={NODE},
    )
    assert options.layer_precisions == {"conv2": "int8"}
    assert options.layer_output_types == {NODE: ["fp16"]}
