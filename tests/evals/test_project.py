"""The generated project: the same folder for a seed, nested, with binaries and a file past the window."""

from __future__ import annotations

from evals.project import BINARY_NAMES, PROJECT_FACTS, Builder, project


def test_a_seed_and_a_size_always_give_the_same_folder_and_another_seed_another() -> None:
    first, again, other = project(7, 60), project(7, 60), project(8, 60)
    assert first.files == again.files and first.mtimes == again.mtimes
    assert first.files != other.files


def test_a_project_has_the_files_asked_for_nested_with_binaries_and_one_newest_file() -> None:
    for count in (15, 60, 250):
        made = project(3, count)
        assert len(made.files) == count and set(made.mtimes) == set(made.files)
        assert max(name.count("/") for name in made.files) >= 2  # nested a few levels
        assert len(set(made.mtimes.values())) == count  # one file is the newest, one the oldest
    big = project(3, 250)
    binaries = [name for name, data in big.files.items() if isinstance(data, bytes)]
    assert binaries and set(binaries) <= set(BINARY_NAMES)
    largest = max(big.files, key=lambda name: len(big.files[name]))
    assert largest == big.planted.largest and len(big.files[largest]) > 8192 * 4  # longer than a small window


def test_from_the_project_size_on_every_fact_is_planted_in_a_file_that_holds_it() -> None:
    made = project(5, PROJECT_FACTS)
    planted = made.planted
    for path in (planted.config, planted.toml, planted.csv, planted.error_log, planted.changelog, planted.checklist,
                 planted.function_file, planted.makefile, *planted.shared_files):  # fmt: skip
        assert path in made.files, path
    assert f"def {planted.function}(" in str(made.files[planted.function_file])
    assert planted.shared_host in str(made.files[planted.shared_files[0]])
    assert all(planted.absent.removeprefix("a ") not in str(text) for text in made.files.values())


def test_one_name_in_one_folder_is_numbered_as_often_as_a_large_project_needs() -> None:
    """A 200,000-file folder (the index bench's largest) asks for the same stem thousands of times in a folder."""
    builder = Builder(seed=1, count=5)
    names = [builder.path("", "notes", ".md") for _ in range(3000)]
    assert len(set(names)) == 3000 and names[:3] == ["notes.md", "notes_2.md", "notes_3.md"]
