"""Memory stays proportional to what an operation needs (issue 11, point 5).

A model with 4 GiB of sparse external weights (holes: no disk, no memory) is run through
check, info and sanitize in a subprocess whose address space is limited to 3 GiB, well
below the weights: check and info read no weight, sanitize keeps what it cannot fold in
memory. fp16 and cast stream each converted weight into the output's data file, so a
2 GiB model converts under a 1.25 GiB limit (below even its converted weights), with the
right values; what still would not fit (one weight larger than the limit) is refused up
front with the memory it would need. Nothing ends in a MemoryError. A model that declares
huge dimensions is checked in bounded memory too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
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


def _limited(args: list[str], cwd: Path, limit: int = LIMIT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RUN.format(limit=limit), *args],
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


@pytest.fixture(scope="module")
def one_huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One 4 GiB float32 weight: more than the 3 GiB limit by itself."""
    return _sparse_model(tmp_path_factory.mktemp("huge"), 1, GIB, foldable=False)


@pytest.mark.parametrize(
    "args",
    [["fp16", "--no-check"], ["cast", "--to", "float16", "--initializer", "w0"]],
)
def test_conversion_refuses_what_does_not_fit(
    args: list[str], one_huge: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.onnx"
    proc = _limited([args[0], str(one_huge), str(out), *args[1:]], tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "GiB of memory" in lines[0], proc.stderr
    assert "MemoryError" not in proc.stderr
    assert list(tmp_path.iterdir()) == []  # no output, no data file, no temporary file


def _plant(weights: Path, count: int, elements: int) -> dict[tuple[int, str], np.ndarray]:
    """Write 1024 known values at the start and at the end of each weight of a sparse
    file (the rest stays holes); one of them beyond the float16 range. Returns them."""
    rng = np.random.default_rng(5)
    planted = {}
    with open(weights, "r+b") as f:
        for i in range(count):
            for where, start in (("head", 0), ("tail", elements - 1024)):
                values = (rng.standard_normal(1024) * 100).astype(np.float32)
                values[7] = 1e6  # saturates to 65504 in float16
                f.seek((i * elements + start) * 4)
                f.write(values.tobytes())
                planted[(i, where)] = values
    return planted


def _spot_check(
    out: Path, planted: dict[tuple[int, str], np.ndarray], elements: int, names: set[str]
) -> None:
    """The converted weights in OUT's data file: the planted values as float16 (saturated),
    zeros between; the weights not named stay float32 references to the input's data."""
    model = onnx.load(str(out), load_external_data=False)
    for tensor in model.graph.initializer:
        info = {e.key: e.value for e in tensor.external_data}
        if tensor.name not in names:
            assert tensor.data_type == TensorProto.FLOAT
            continue
        assert tensor.data_type == TensorProto.FLOAT16
        assert int(info["length"]) == elements * 2
        data = np.memmap(
            out.parent / info["location"], np.float16, "r", int(info["offset"]), (elements,)
        )
        i = int(tensor.name[1:])
        for where, start in (("head", 0), ("tail", elements - 1024)):
            expected = np.clip(planted[(i, where)], -65504, 65504).astype(np.float16)
            np.testing.assert_array_equal(data[start : start + 1024], expected)
        for probe in (1024, elements // 3, elements // 2, elements - 1025):
            assert data[probe] == 0
        del data


#: 8 weights of 256 MiB: a 2 GiB model (1 GiB converted) under a 1.25 GiB address space.
STREAM_COUNT, STREAM_ELEMENTS, STREAM_LIMIT = 8, 1 << 26, 5 * GIB // 4


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:  # type: ignore[type-arg]
    folder = tmp_path_factory.mktemp("stream")
    model = _sparse_model(folder, STREAM_COUNT, STREAM_ELEMENTS, foldable=False)
    return model, _plant(folder / "weights.bin", STREAM_COUNT, STREAM_ELEMENTS)


def test_fp16_streams_a_model_larger_than_the_limit(
    planted: tuple[Path, dict],
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    model, values = planted
    assert model.with_name("weights.bin").stat().st_size > STREAM_LIMIT + GIB // 2
    out = tmp_path / "out.onnx"
    proc = _limited(["fp16", str(model), str(out), "--no-check"], tmp_path, STREAM_LIMIT)
    assert proc.returncode == 0, proc.stderr
    assert "8 initializer(s) converted" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.onnx", "out.onnx.data"]
    _spot_check(out, values, STREAM_ELEMENTS, {f"w{i}" for i in range(STREAM_COUNT)})
    check = _limited(["check", str(out)], tmp_path, STREAM_LIMIT)
    assert check.returncode == 0, check.stdout + check.stderr


def test_fp16_with_its_check_refuses_and_names_the_streamed_way(
    planted: tuple[Path, dict],
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    """The numerical check runs both models in ONNX Runtime: the converted weights must be
    held, so a model larger than the limit is refused up front, pointing to --no-check."""
    model, _values = planted
    out = tmp_path / "out.onnx"
    proc = _limited(["fp16", str(model), str(out)], tmp_path, STREAM_LIMIT)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "GiB of memory" in lines[0] and "--no-check" in lines[0], lines
    assert list(tmp_path.iterdir()) == []


def test_cast_streams_more_than_the_limit_would_hold(
    planted: tuple[Path, dict],
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    """Three of the weights (768 MiB in, 384 MiB out): held until the save with a rollback
    copy as before, they would need more than the limit leaves."""
    model, values = planted
    out = tmp_path / "out.onnx"
    names = ["w1", "w4", "w6"]
    cast = ["--to", "float16", *(a for n in names for a in ("--initializer", n))]
    proc = _limited(["cast", str(model), str(out), *cast], tmp_path, STREAM_LIMIT)
    assert proc.returncode == 0, proc.stderr
    _spot_check(out, values, STREAM_ELEMENTS, set(names))


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
