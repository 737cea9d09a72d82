"""The models we know: each entry pins its file by size and sha256, and an unknown name lists the known ones."""

from __future__ import annotations

import pytest

from models.errors import UnknownModelName
from models.registry import MODELS, QWEN, QWEN_CODER_05, QWEN_CODER_15, SMOLLM2, SplitWheels, model_spec


def test_every_entry_carries_its_size_and_sha256_and_parts_add_up() -> None:
    assert set(MODELS) == {QWEN.name, QWEN_CODER_05.name, QWEN_CODER_15.name, SMOLLM2.name}
    for spec in MODELS.values():
        assert spec.file.size > 0 and len(spec.file.sha256) == 64 and spec.license == "Apache-2.0"
    for spec in (QWEN_CODER_05, QWEN_CODER_15):
        assert isinstance(spec.source, SplitWheels)
        assert sum(part.size for part in spec.source.parts) == spec.file.size
    assert QWEN.source.revision == "9217f5db79a29953eb74d5343926648285ec7e67"  # type: ignore[union-attr]
    with pytest.raises(UnknownModelName, match=r"known models: qwen2\.5-0\.5b-instruct, qwen2\.5-coder-0\.5b-instruct"):
        model_spec("gpt-5")


def test_numbered_parts_name_their_wheel_and_member_in_order() -> None:
    wheels = SplitWheels.numbered("m-part", "m_part", "2.0", [(3, "a" * 64), (5, "b" * 64)])
    assert [(p.number, p.requirement, p.member, p.size) for p in wheels.parts] == [
        (1, "m-part1==2.0", "m_part1/data/part01.bin", 3),
        (2, "m-part2==2.0", "m_part2/data/part02.bin", 5),
    ]


def test_a_known_name_gives_its_entry() -> None:
    assert model_spec("qwen2.5-coder-1.5b-instruct") is QWEN_CODER_15
    assert all(model_spec(name).name == name for name in MODELS)
