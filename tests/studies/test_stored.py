"""The one reader of the stored results (geron_lib.studies.stored.load): what it reads, and what it says of a
missing file, a broken one, one that is not a JSON object, and an argument that is not a path."""

import json

import pytest

from geron_lib.studies import stored

SCRIPT = "scripts/some_experiment.py"


def test_reads_the_json_object_a_script_wrote(tmp_path):
    results = {"setup": {"seeds": [0, 1]}, "runs": [{"loss": 5.25}]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    assert stored.load(path, SCRIPT) == results
    assert stored.load(str(path), SCRIPT) == results


def test_a_missing_file_names_the_path_and_the_script_that_writes_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing\.json: scripts/some_experiment\.py writes them"):
        stored.load(tmp_path / "missing.json", SCRIPT)
    with pytest.raises(FileNotFoundError, match="no stored results at"):
        stored.load(tmp_path, SCRIPT)  # a folder is no file


@pytest.mark.parametrize("content", [b'{"runs": [', b"", b'{"runs": [1, 2,]}', b"\xff\xfe{}"],
                         ids=["cut short", "empty", "trailing comma", "not UTF-8"])
def test_a_broken_file_is_a_value_error_naming_the_file(tmp_path, content):
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"broken\.json is not valid JSON .*some_experiment\.py") as e:
        stored.load(path, SCRIPT)
    assert not isinstance(e.value, json.JSONDecodeError)


@pytest.mark.parametrize("content", ["[1, 2]", '"runs"', "3"])
def test_a_file_that_is_no_json_object_is_refused(tmp_path, content):
    path = tmp_path / "list.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=r"list\.json must hold a JSON object"):
        stored.load(path, SCRIPT)


@pytest.mark.parametrize("path", [3, None, b"results.json", ["results.json"]])
def test_a_path_that_is_no_path_is_a_type_error_naming_it(path):
    with pytest.raises(TypeError, match="path must be a file path"):
        stored.load(path, SCRIPT)

