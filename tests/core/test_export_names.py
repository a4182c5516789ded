"""File names made from operator names, and where exports go: folders get sanitised names,
existing files are refused unless forced, and writes leave no half files behind."""

from __future__ import annotations

import keyword

import pytest

from core.export import ExportError, class_name, docstring_text, file_stem, output_paths, refuse_overwrite
from core.export.outputs import write_with


@pytest.mark.parametrize(
    "name, stem",
    [
        ("conv2d", "conv2d"),
        ("Gated separable (v2)", "gated_separable_v2"),
        ("../../etc/passwd", "etc_passwd"),
        ("Opérateur à noyau", "operateur_a_noyau"),
        ("2x2 shift", "op_2x2_shift"),
        ("", "operator"),
        ("///", "operator"),
        ("CON", "con_op"),
        ("import", "import_op"),
        ("名前", "operator"),
        ("a" * 200, "a" * 60),
    ],
)
def test_file_stems_are_plain_and_never_empty(name, stem):
    assert file_stem(name) == stem
    assert stem.isidentifier() and not keyword.iskeyword(stem)


@pytest.mark.parametrize(
    "name, cls",
    [
        ("gated separable v2", "GatedSeparableV2"),
        ("2x2", "Op2x2"),
        ("none", "OpNone"),
        ("", "Operator"),
        ("torch", "Torch"),
    ],
)
def test_class_names_are_identifiers_and_not_keywords(name, cls):
    assert class_name(name) == cls
    assert cls.isidentifier() and not keyword.iskeyword(cls)


def test_docstring_text_cannot_end_a_docstring_or_escape():
    text = docstring_text('evil"""\nimport os\\x00 ünïcode \'q\'')
    assert '"' not in text and "\\" not in text and "'" not in text and "\n" not in text
    assert text == "evil??? import os?x00 unicode ?q?"
    assert len(docstring_text("x" * 500)) == 200


def test_a_folder_gets_a_file_named_after_the_operator(tmp_path):
    assert output_paths("torch", tmp_path, "Gated separable (v2)") == [tmp_path / "gated_separable_v2.py"]
    assert output_paths("tvmscript", tmp_path, "conv") == [tmp_path / "conv_tvmscript.py"]
    assert output_paths("png", f"{tmp_path}/new/", "../x") == [tmp_path / "new" / "x.png"]
    assert output_paths("dot", tmp_path / "mine.gv", "conv") == [tmp_path / "mine.gv"]
    assert output_paths("library", tmp_path, "my op") == [tmp_path / "my_op.so", tmp_path / "my_op_loader.py"]
    # a name TVM's loader could not read the format of gets the suffix
    assert output_paths("library", tmp_path / "mylib", "op") == [tmp_path / "mylib.so", tmp_path / "mylib_loader.py"]
    assert output_paths("library", tmp_path / "k.v2", "op")[0] == tmp_path / "k.v2.so"


def test_a_library_name_must_be_plain_because_its_loader_names_it(tmp_path):
    with pytest.raises(ExportError, match="library file name 'my lib.so'"):
        output_paths("library", tmp_path / "my lib.so", "op")


def test_existing_files_are_refused_unless_forced(tmp_path):
    kept = tmp_path / "op.py"
    kept.write_text("mine")
    paths = [kept, tmp_path / "other.py"]
    with pytest.raises(ExportError, match=r"op\.py already exists; pass --force to overwrite"):
        refuse_overwrite(paths, force=False)
    refuse_overwrite(paths, force=True)
    refuse_overwrite([tmp_path / "new.py"], force=False)
    with pytest.raises(ExportError, match="is a folder"):
        refuse_overwrite([tmp_path], force=True)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "op.py"
    target.write_text("old")

    def fail(tmp):
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(ExportError, match="cannot write .*op.py: No space left on device"):
        write_with(target, fail)
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["op.py"]
