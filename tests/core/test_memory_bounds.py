"""Memory stays proportional to what an operation needs (issue 11, point 5).

A model with 4 GiB of sparse external weights (holes: no disk, no memory) is run through
check, info, sanitize and fp16 in a subprocess whose address space is limited to 3 GiB,
well below the weights: check and info read no weight, sanitize keeps what it cannot fold
in memory, fp16 refuses with the memory it would need; nothing ends in a MemoryError.
A model that declares huge dimensions is checked in bounded memory too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
GIB = 1 << 30
LIMIT = 3 * GIB

_RUN = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from designer.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _sparse_model(folder: Path, count: int, elements: int, foldable: bool) -> Path:
    """``count`` float32 weights of ``elements`` each in one sparse ``weights.bin``."""
    size = elements * 4
    with open(folder / "weights.bin", "wb") as f:
        f.truncate(size * count)
    inits, nodes, previous = [], [], "x"
    for i in range(count):
        tensor = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[elements])
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (
            ("location", "weights.bin"),
            ("offset", str(i * size)),
            ("length", str(size)),
        ):
            tensor.external_data.add(key=key, value=value)
        inits.append(tensor)
        weight = f"w{i}"
        if foldable:  # Neg of a constant: sanitize would fold it (a 1 GiB result)
            nodes.append(helper.make_node("Neg", [weight], [f"n{i}"], name=f"neg{i}"))
            weight = f"n{i}"
        nodes.append(helper.make_node("Add", [previous, weight], [f"y{i}"], name=f"add{i}"))
        previous = f"y{i}"
    graph = helper.make_graph(
        nodes,
        "sparse",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements])],
        [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [elements])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = folder / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _limited(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RUN.format(limit=LIMIT), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"},
    )


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sparse")
    return _sparse_model(folder, 4, GIB // 4, foldable=True)


@pytest.mark.parametrize("where", ["model folder", "elsewhere"])
def test_check_and_info_read_no_weights(sparse: Path, where: str, tmp_path: Path) -> None:
    cwd = sparse.parent if where == "model folder" else tmp_path
    model = sparse.name if where == "model folder" else str(sparse)
    for command in ("check", "info"):
        proc = _limited([command, model], cwd)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "", proc.stderr
        if command == "check":
            assert "0 error(s)" in proc.stdout  # the verdict does not depend on the folder


def test_sanitize_keeps_what_does_not_fit(sparse: Path, tmp_path: Path) -> None:
    out = sparse.parent / "sanitized.onnx"  # beside it: the 4 GiB are referred to, not copied
    proc = _limited(["sanitize", str(sparse), str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "would not fit in the memory available" in proc.stdout
    assert _limited(["check", str(out)], tmp_path).returncode == 0


@pytest.mark.parametrize(
    "args",
    [["fp16", "--no-check"], ["cast", "--to", "float16", "--initializer", "w0"]],
)
def test_conversion_refuses_what_does_not_fit(
    args: list[str], sparse: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.onnx"
    if args[0] == "cast":
        args = [*args, "--initializer", "w1", "--initializer", "w2", "--initializer", "w3"]
    proc = _limited([args[0], str(sparse), str(out), *args[1:]], tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "GiB of memory" in lines[0], proc.stderr
    assert "MemoryError" not in proc.stderr
    assert not out.exists()


def test_fp16_converts_one_tensor_at_a_time(tmp_path: Path) -> None:
    """Two 64 MiB weights convert under the limit: one at a time, memory-mapped."""
    folder = tmp_path / "in"
    folder.mkdir()
    model = _sparse_model(folder, 2, 16 << 20, foldable=False)
    out = tmp_path / "out.onnx"
    proc = _limited(["fp16", str(model), str(out), "--no-check"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    converted = onnx.load(str(out), load_external_data=False)
    assert all(t.data_type == TensorProto.FLOAT16 for t in converted.graph.initializer)


@pytest.mark.parametrize("op", ["Add", "Reshape"])
def test_check_of_huge_declared_dims(op: str, tmp_path: Path) -> None:
    """A tiny model whose 1-D input declares 10**9 elements: onnx's data propagation would
    make a shape of 10**9 dimensions out of it (gigabytes)."""
    n = 10**9
    if op == "ConstantOfShape":
        nodes = [helper.make_node(op, ["s"], ["y"])]
        inputs = [helper.make_tensor_value_info("s", TensorProto.INT64, [n])]
    else:
        second = "s" if op != "Add" else "x"
        nodes = [helper.make_node(op, ["x", second], ["y"])]
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])]
        if op != "Add":
            inputs.append(helper.make_tensor_value_info("s", TensorProto.INT64, [n]))
    nodes.append(helper.make_node("Size", ["y"], ["z"]))
    graph = helper.make_graph(
        nodes, "huge", inputs, [helper.make_tensor_value_info("z", TensorProto.INT64, [])]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path = tmp_path / "huge.onnx"
    path.write_bytes(model.SerializeToString())
    assert path.stat().st_size < 4096
    proc = _limited(["check", str(path)], tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "MemoryError" not in proc.stderr and "internal error" not in proc.stderr
