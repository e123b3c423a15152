"""The proto3 twin that checks a model's text in C (designer.core.text_check), and the open
path that trusts it: it must refuse what is not UTF-8 wherever it is, pass what is, and a
refusal must never make a model unopenable that the full walk accepts."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from helpers.models import chain_model, function_model
from onnx import helper

from designer.core.errors import ModelLoadError
from designer.core.io import read_model
from designer.core.text_check import text_is_utf8
from designer.core.validate import check_model

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"


def _broken(model: onnx.ModelProto, name: str) -> bytes:
    data = model.SerializeToString()
    assert data.count(name.encode()) >= 1
    return data.replace(name.encode(), b"\xff" * len(name))


def test_valid_models_pass() -> None:
    assert text_is_utf8(chain_model().SerializeToString())
    assert text_is_utf8(function_model().SerializeToString())
    text = chain_model()
    text.graph.node[0].name = "ノード ü"  # UTF-8 beyond ASCII is text
    assert text_is_utf8(text.SerializeToString())


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.onnx"))[:4], ids=lambda p: p.name)
def test_real_exports_pass(path: Path) -> None:
    assert text_is_utf8(path.read_bytes())


@pytest.mark.parametrize("name", ["relu1", "Y_pre", "W"])  # a node, a value, an initializer
def test_bad_text_anywhere_is_refused(name: str) -> None:
    assert not text_is_utf8(_broken(chain_model(), name))


def test_bytes_fields_are_not_text() -> None:
    """Raw tensor data and string attributes are bytes: anything goes there."""
    model = chain_model()
    model.graph.node[0].attribute.append(helper.make_attribute("blob", b"\xff\xfe\x00"))
    model.graph.initializer[0].raw_data = b"\xff\xfe" * 8
    model.graph.initializer[0].dims[:] = [4]
    assert text_is_utf8(model.SerializeToString())


def test_text_in_a_subgraph_and_a_function_is_checked() -> None:
    model = function_model()
    names = [n.name for fn in model.functions for n in fn.node if n.name]
    assert names
    assert not text_is_utf8(_broken(model, names[0]))


def test_what_is_no_model_is_refused() -> None:
    assert not text_is_utf8(b"\x0a\xff\xff\xff")  # truncated


def test_open_still_names_the_node(tmp_path: Path) -> None:
    """The twin only says "look closer": the walk then names what is not text."""
    path = tmp_path / "m.onnx"
    path.write_bytes(_broken(chain_model(), "relu1"))
    with pytest.raises(ModelLoadError, match="not valid UTF-8 text"):
        read_model(path)


def test_bad_text_the_walk_does_not_read_still_opens(tmp_path: Path) -> None:
    """A node's metadata is text no command relies on: the twin refuses it, the walk
    accepts it, and the model opens as it did before the twin."""
    model = chain_model()
    helper.set_model_props(model, {})
    entry = model.graph.node[0].metadata_props.add()
    entry.key, entry.value = "note", "zzzzqq"
    data = model.SerializeToString().replace(b"zzzzqq", b"\xff" * 6)
    assert not text_is_utf8(data)
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    assert len(read_model(path).graph.node) == len(model.graph.node)


def test_trusting_the_twin_skips_only_text() -> None:
    """With the text checked, the walk still refuses what is not text (a bad element
    type) and still reads attributes."""
    model = chain_model()
    model.graph.input[0].type.tensor_type.elem_type = 999
    assert check_model(model, text_checked=True).problem is not None
    model = chain_model()
    short = onnx.TensorProto(name="t", data_type=onnx.TensorProto.FLOAT, dims=[4], raw_data=b"abc")
    model.graph.node[0].attribute.append(helper.make_attribute("value", short))
    problem = check_model(model, text_checked=True).problem
    assert problem is not None and "'t'" in problem
    assert problem == check_model(model).problem


def test_big_files_are_walked_instead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above TEXT_CHECK_BYTES the twin is not parsed (it would hold a second copy of every
    weight): the walk alone refuses bad text and accepts good text."""
    import designer.core.io.load as load

    asked: list[bool] = []
    real = load.check_model

    def spy(model: onnx.ModelProto, *, text_checked: bool = False) -> object:
        asked.append(text_checked)
        return real(model, text_checked=text_checked)

    monkeypatch.setattr(load, "check_model", spy)
    good, bad = tmp_path / "good.onnx", tmp_path / "bad.onnx"
    good.write_bytes(chain_model().SerializeToString())
    bad.write_bytes(_broken(chain_model(), "relu1"))
    read_model(good)
    assert asked == [True]  # a small file: the twin said its text is fine
    monkeypatch.setattr(load, "TEXT_CHECK_BYTES", 16)
    monkeypatch.setattr(load, "text_is_utf8", lambda data: pytest.fail("twin parsed"))
    read_model(good)
    with pytest.raises(ModelLoadError, match="not valid UTF-8 text"):
        read_model(bad)
    assert asked == [True, False, False]


def test_no_twin_means_the_walk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An onnx whose schema cannot be copied (say, split over several files) still opens
    models: the twin is skipped and the walk checks the text."""
    import designer.core.text_check as text_check

    def broken() -> None:
        raise TypeError("depends on a file the pool does not have")

    text_check._safe_twin.cache_clear()
    monkeypatch.setattr(text_check, "_twin", broken)
    try:
        assert not text_is_utf8(chain_model().SerializeToString())
        good, bad = tmp_path / "good.onnx", tmp_path / "bad.onnx"
        good.write_bytes(chain_model().SerializeToString())
        bad.write_bytes(_broken(chain_model(), "relu1"))
        assert read_model(good).graph.node
        with pytest.raises(ModelLoadError, match="not valid UTF-8 text"):
            read_model(bad)
    finally:
        text_check._safe_twin.cache_clear()
