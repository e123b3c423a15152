"""Write safety of saves: ``extract`` never writes over its input, a streamed save into a
folder it cannot write says so as a user error and leaves nothing, and any file name the
folder accepts can be saved (the temporary names stay within its length limit)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.models import subgraph_model
from test_cli import assert_one_line_error, run
from test_save_atomic import _assert_tidy, _model, _save_external, _values, _version
from test_save_streamed import streamed_fp16

from designer.core.errors import ModelSaveError
from designer.core.io import open_document, save_document, write_model
from designer.core.io.atomic import (
    _HOST,
    _OURS,
    create_temp,
    is_stale,
    name_max,
    release,
    temp_path,
)
from designer.core.io.stream import DataSink

ROOT = Path(__file__).resolve().parents[2]
SAME = "the output path is the input; choose another file"


# --- extract MODEL MODEL -------------------------------------------------------------------
def _extract(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return run("extract", source, out, "--node", "branch", "--attribute", "then_branch")


def test_extract_refuses_to_write_over_its_input(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    (folder / "sub").mkdir(parents=True)
    source = folder / "sub.onnx"
    onnx.save(subgraph_model(), source)
    original = source.read_bytes()
    (tmp_path / "link.onnx").symlink_to(source)
    os.link(source, tmp_path / "hard.onnx")
    (tmp_path / "linked").symlink_to(folder)
    spellings = [
        source,  # the same path
        folder / "sub" / ".." / "sub.onnx",  # another spelling of it
        tmp_path / "link.onnx",  # a symbolic link to it
        tmp_path / "hard.onnx",  # a hard link: the same file under another name
        tmp_path / "linked" / "sub.onnx",  # through a linked folder
    ]
    for out in spellings:
        result = _extract(source, out)
        assert_one_line_error(result, f"{out}: {SAME}")
        assert source.read_bytes() == original, out
    # and through a link the other way round: the source named by the link
    assert_one_line_error(_extract(tmp_path / "link.onnx", source), SAME)
    assert source.read_bytes() == original
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    # another file is still written
    result = _extract(source, tmp_path / "then.onnx")
    assert result.returncode == 0, result.stderr


# --- streamed saves into a folder that cannot be written -----------------------------------
def _ordinary_user() -> list[str]:
    """A command prefix that runs without the right to write anywhere (root without
    CAP_DAC_OVERRIDE is an ordinary user as far as folder permissions go)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is not installed")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


@pytest.mark.parametrize(
    "command",
    [["cast", "--to", "float16", "--initializer", "w"], ["fp16", "--no-check"]],
    ids=["cast", "fp16-no-check"],
)
def test_streamed_write_into_a_read_only_folder_is_a_user_error(
    tmp_path: Path, command: list[str]
) -> None:
    source = _save_external(_version(1), tmp_path / "src" / "m.onnx")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    prefix = _ordinary_user()
    probe = subprocess.run([*prefix, "touch", str(folder / "probe")], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("this user can write into a read-only folder")
    out = folder / "o.onnx"
    args = [command[0], str(source), str(out), *command[1:]]
    try:
        result = subprocess.run(
            [*prefix, sys.executable, "-m", "designer.cli", *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
    finally:
        folder.chmod(0o755)
    assert_one_line_error(result, f"{out}: permission denied writing {folder}")
    assert "internal error" not in result.stderr and ".tmp" not in result.stderr
    assert list(folder.iterdir()) == []


_FULL = """
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from test_save_streamed import streamed_fp16
from designer.core.errors import ModelSaveError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
try:
    streamed_fp16(Path(sys.argv[1]), Path(sys.argv[2]))
except ModelSaveError as exc:
    print(exc)
    sys.exit(7)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_streamed_write_that_runs_out_of_room_is_a_user_error(tmp_path: Path) -> None:
    """The data file cannot grow (a full disk, a quota; here a file size limit): a
    ModelSaveError naming the folder and why, and nothing left behind."""
    source = _save_external(_version(2, 1 << 16), tmp_path / "src" / "m.onnx")  # 256 KiB
    folder = tmp_path / "out"
    folder.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", _FULL, str(source), str(folder / "o.onnx"), str(ROOT / "tests")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT / "tests" / "core",
    )
    assert result.returncode == 7, result.stderr
    message = result.stdout.strip()
    assert message.startswith(f"{folder / 'o.onnx'}: cannot write {folder} (File too large)")
    assert message.endswith("choose another folder") and ".tmp" not in message
    assert list(folder.iterdir()) == []


def test_a_streamed_save_whose_data_file_name_cannot_exist_fails_at_once(
    tmp_path: Path,
) -> None:
    limit = name_max(tmp_path)
    out = tmp_path / ("d" * (limit - 7) + ".onnx")  # fits; "<name>.data" does not
    with pytest.raises(ModelSaveError, match="choose a shorter file name"):
        DataSink(out, None)
    assert list(tmp_path.iterdir()) == []


# --- long file names -------------------------------------------------------------------------
def _name(size: int, char: str = "a") -> str:
    """A model file name of ``size`` bytes, made of ``char`` (ASCII or two bytes)."""
    width = len(char.encode())
    return char * ((size - 5) // width) + "a" * ((size - 5) % width) + ".onnx"


@pytest.fixture
def room(tmp_path: Path) -> int:
    limit = name_max(tmp_path)
    if limit < 255:
        pytest.skip(f"this file system takes names of {limit} bytes only")
    return limit


@pytest.mark.parametrize("kind", ["part", "journal"])
def test_temporary_names_of_long_names_fit_and_stay_ours(
    tmp_path: Path, room: int, kind: str
) -> None:
    for name in (_name(230), _name(250), _name(room), _name(250, "é"), "m.onnx"):
        target = tmp_path / name
        temp = temp_path(target, kind)
        assert len(os.fsencode(temp.name)) <= room, name
        temp.name.encode("utf-8")  # whole characters: no half of an "é"
        match = _OURS.match(temp.name)
        assert match is not None and match["kind"] == kind, name
        assert name.startswith(match["name"]) and match["pid"] == str(os.getpid())
        if len(name.encode()) < 200:
            assert match["name"] == name  # short names are copied whole
        temp.write_bytes(b"x")
        assert is_stale(temp)  # this process, no save of it writing it
        fd, mine = create_temp(target, kind)
        os.close(fd)
        assert not is_stale(mine)  # being written
        release(mine)
        other = temp.with_name(temp.name.replace(f"@{_HOST}~", "@00000000~"))
        other.write_bytes(b"x")
        assert not is_stale(other)  # another host's, recent
        old = time.time() - 2 * 24 * 3600
        os.utime(other, (old, old))
        assert is_stale(other)
        for path in (temp, mine, other):
            path.unlink()


@pytest.mark.parametrize("size", [230, 250])
def test_long_file_names_save(tmp_path: Path, room: int, size: int) -> None:
    arrays = _version(3)
    for char in ("a", "é"):
        folder = tmp_path / char
        folder.mkdir()
        inline = folder / _name(size, char)
        write_model(_model(arrays), inline, None)  # model file only
        _assert_tidy(inline)
        np.testing.assert_array_equal(_values(inline)["w"], arrays["w"])
        inline.unlink()
        external = folder / _name(size, char)
        write_model(_model(arrays), external, None, limit=0)  # with <name>.data, a journal
        _assert_tidy(external)
        assert (folder / f"{external.name}.data").is_file()
        np.testing.assert_array_equal(_values(external)["w"], arrays["w"])
        doc = open_document(external)
        doc.model.doc_string = "saved again"
        save_document(doc)  # in place, over the old one
        _assert_tidy(external)
        shutil.rmtree(folder)
    source = _save_external(_version(4), tmp_path / "src" / "m.onnx")
    out = tmp_path / "out" / _name(size)
    out.parent.mkdir()
    streamed_fp16(source, out)  # a data file streamed in while converting
    _assert_tidy(out)
    assert _values(out)["w"].dtype == np.float16


def test_long_stale_temporary_files_are_cleaned_by_the_next_save(tmp_path: Path, room: int) -> None:
    model = tmp_path / _name(room)
    leftover = temp_path(model)  # of this process, no save writing it: stale
    leftover.write_bytes(b"half a model")
    other = temp_path(model).name.replace(f"@{_HOST}~", "@00000000~")
    recent = tmp_path / other  # another host's, recent: kept
    recent.write_bytes(b"another host's save")
    write_model(_model(_version(5)), model, None)
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {model.name, recent.name}


_FULL_PLAIN = """
import resource, signal, sys
from pathlib import Path
import onnx
from designer.core.errors import ModelSaveError
from designer.core.io.save import write_model
model = onnx.load(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
try:
    write_model(model, Path(sys.argv[2]), None)
except ModelSaveError as exc:
    print(exc)
    sys.exit(7)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_plain_write_that_runs_out_of_room_says_what_to_do(tmp_path: Path) -> None:
    """The same for a model written in one piece: the folder, why, and what to do (it said
    only "cannot write (File too large)")."""
    source = tmp_path / "src.onnx"
    onnx.save(_model(_version(2, 1 << 16)), source)  # inline weights: 256 KiB in the file
    folder = tmp_path / "out"
    folder.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", _FULL_PLAIN, str(source), str(folder / "o.onnx")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 7, result.stderr
    message = result.stdout.strip()
    assert message.startswith(f"{folder / 'o.onnx'}: cannot write {folder} (File too large)")
    assert message.endswith("choose another folder") and ".tmp" not in message
    assert list(folder.iterdir()) == []
