"""OpenAI chat-completions shapes.

Messages, tools and tool calls are TypedDicts so that a run state stays plain JSON; the request and
response bodies are pydantic models whose fields are those TypedDicts, so one definition serves both
validation on the servers and in the client and plain-dict handling in the harness.
"""

from __future__ import annotations

import builtins
import json
import re
import time
import uuid
from typing import (  # pydantic needs these on 3.11
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    TypeAlias,
    cast,
    get_args,
)

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)
from typing_extensions import TypedDict


class FunctionCall(TypedDict):
    name: str
    arguments: str  # a JSON document, as the OpenAI wire format carries it


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str


class AssistantMessage(TypedDict, total=False):
    role: Required[Literal["assistant"]]
    content: str | None
    tool_calls: list[ToolCall]


class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    name: NotRequired[str]
    content: str


Message: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]


class FunctionDefinition(TypedDict):
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]


class ToolDefinition(TypedDict):
    type: Literal["function"]
    function: FunctionDefinition


class NamedFunction(TypedDict):
    name: str


class NamedToolChoice(TypedDict):
    type: Literal["function"]
    function: NamedFunction


class AllowedTools(TypedDict):
    mode: Literal["auto", "required"]
    tools: Annotated[list[NamedToolChoice], Field(min_length=1, max_length=1024)]


class AllowedToolsChoice(TypedDict):
    """OpenAI's `allowed_tools`: only these of the tools may be called (`required`: one of them must be).
    Every tool stays in the prompt, so a prompt a server has cached stays the same from turn to turn."""

    type: Literal["allowed_tools"]
    allowed_tools: AllowedTools


ChoiceMode: TypeAlias = Literal["none", "auto", "required"]
ToolChoice: TypeAlias = ChoiceMode | NamedToolChoice | AllowedToolsChoice


def choice_mode(choice: ToolChoice | None) -> ChoiceMode:
    """Whether a tool_choice lets a reply call a tool (`auto`), makes it call one (`required`), or neither."""
    if choice is None or isinstance(choice, str):
        return choice or "auto"
    return "required" if choice["type"] == "function" else choice["allowed_tools"]["mode"]


def choice_allows(choice: ToolChoice | None, names: list[str]) -> tuple[ChoiceMode, list[str]]:
    """What a tool_choice lets a reply do with the tools named: whether it may or must call one (`mode`), and
    the names it may call, in the tools' order. A named tool is `required` of one; a choice that names a tool
    not among them leaves it out."""
    mode = choice_mode(choice)
    if mode == "none" or not isinstance(choice, dict):
        return mode, [] if mode == "none" else list(names)
    named = set(choice_names(choice))
    return mode, [n for n in names if n in named]


def choice_names(choice: ToolChoice | None) -> list[str]:
    """The tool names a tool_choice itself names (a named call's one, allowed_tools' list; none for a mode)."""
    if choice is None or isinstance(choice, str):
        return []
    if choice["type"] == "function":
        return [choice["function"]["name"]]
    return [t["function"]["name"] for t in choice["allowed_tools"]["tools"]]


def allowing(mode: Literal["auto", "required"], names: list[str]) -> AllowedToolsChoice:
    return {
        "type": "allowed_tools",
        "allowed_tools": {"mode": mode, "tools": [{"type": "function", "function": {"name": n}} for n in names]},
    }


FinishReason: TypeAlias = Literal["stop", "length", "tool_calls", "content_filter"]


class StreamOptions(BaseModel):
    include_usage: bool = False


class JsonSchemaFormat(TypedDict, total=False):
    name: Required[str]
    schema: dict[str, Any]
    strict: bool | None
    description: str


class ResponseFormat(BaseModel):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None


MAX_STOP_STRINGS = 16
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI's rule for a function's name


def canonical(value: object) -> str:
    """JSON with sorted keys and no spaces: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


RANDOM_SEED = -1
MAX_SEED = 2**63 - 1


def joined_content(content: object, where: str) -> object:
    """Content given as a list of text parts (langchain, the agents SDK, pydantic-ai do this) as one string."""
    if not isinstance(content, list):
        return content
    texts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise ValueError(f"{where}.content[{index}] is a {kind!r} part; this server reads only text parts")
        texts.append(part["text"])
    return "\n".join(texts)


def normalised_message(raw: object, index: int) -> object:
    """A client's message in the wire shape: text parts joined, `developer` read as `system`, nulls dropped."""
    if not isinstance(raw, dict):
        return raw
    message = {key: value for key, value in raw.items() if value is not None or key == "content"}
    if message.get("role") == "assistant" and message.get("tool_calls") == []:
        del message["tool_calls"]
    if message.get("role") == "developer":
        message["role"] = "system"
    if "content" in message:
        message["content"] = joined_content(message["content"], f"messages[{index}]")
    return message


class ChatCompletionRequest(BaseModel):
    """The request body. Fields a server does not use (user, penalties, metadata...) are accepted and ignored."""

    model: str
    messages: list[Message] = Field(min_length=1)
    tools: list[ToolDefinition] | None = None
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    stop: str | list[str] | None = None
    # -1 asks for a fresh random seed (llama-server's reading); otherwise 0 to 2**63 - 1
    seed: int | None = Field(default=None, ge=RANDOM_SEED, le=MAX_SEED)
    n: int | None = Field(default=None, ge=1)
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    response_format: ResponseFormat | None = None
    grammar: str | None = Field(default=None, max_length=100_000)  # llama-server's extension: a GBNF grammar
    tool_rendering: Literal["native", "hermes"] | None = None  # ours: the Hermes text even if the template has tools
    # ours: per tool name, the schema its calls' arguments are decoded under, in place of the tool's own
    # `parameters`; the prompt shows the tools as sent, so a client can narrow a call from turn to turn
    # (say, to the files it has not read) without changing the prompt's cached prefix
    tool_parameters: dict[str, dict[str, Any]] | None = None
    # ours: the tools whose calls are worth making once per reply; a reply ends at its first call of one of
    # them identical (same name, same arguments) to an earlier call of the same reply, and that call is dropped
    distinct_calls: list[str] | None = Field(default=None, max_length=1024)
    ignore_eos: bool | None = None  # llama-server's extension: generate to max_tokens (for measurements)
    parallel_tool_calls: bool | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None

    @field_validator("messages", mode="before")
    @classmethod
    def client_shapes(cls, value: object) -> object:
        return [normalised_message(m, i) for i, m in enumerate(value)] if isinstance(value, list) else value

    @field_validator("stop")
    @classmethod
    def few_stops(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and len(value) > MAX_STOP_STRINGS:
            raise ValueError(f"at most {MAX_STOP_STRINGS} stop strings")
        return value

    def completion_limit(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens

    def stop_strings(self) -> list[str]:
        if self.stop is None:
            return []
        return [s for s in ([self.stop] if isinstance(self.stop, str) else self.stop) if s]

    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.tools or []]


class PromptTokensDetails(BaseModel):
    cached_tokens: int = 0


class Usage(BaseModel):
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    total_tokens: int = Field(ge=0)
    prompt_tokens_details: PromptTokensDetails | None = None


class Timings(BaseModel):
    """llama-server's per-request timings, under its own field names."""

    cache_n: int
    prompt_n: int
    prompt_ms: float
    prompt_per_second: float
    predicted_n: int
    predicted_ms: float
    predicted_per_second: float
    cache_ms: float | None = None  # ours: time spent copying a cached conversation into a free sequence
    draft_n: int | None = None  # guessed tokens the model checked (prompt-lookup drafting), when it was on
    draft_n_accepted: int | None = None  # of those, the ones it chose itself

    def record(self) -> TimingsRecord:
        """The timings as a trace line or a result file keeps them (JSON)."""
        return cast(TimingsRecord, self.model_dump())


class TimingsRecord(TypedDict):
    """`Timings` as JSON keeps them (the same fields; a test holds the two together)."""

    cache_n: int
    prompt_n: int
    prompt_ms: float
    prompt_per_second: float
    predicted_n: int
    predicted_ms: float
    predicted_per_second: float
    cache_ms: float | None
    draft_n: int | None
    draft_n_accepted: int | None


class TopLogprob(TypedDict):
    token: str
    logprob: float
    bytes: list[int] | None


class TokenLogprob(TypedDict):
    token: str
    logprob: float
    bytes: list[int] | None
    top_logprobs: list[TopLogprob]


class ChoiceLogprobs(TypedDict):
    content: list[TokenLogprob] | None


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: FinishReason | None = None
    logprobs: ChoiceLogprobs | None = None


class ChatCompletion(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str = Field(default_factory=lambda: completion_id())
    object: Literal["chat.completion"] = "chat.completion"
    created: int = Field(default_factory=lambda: int(time.time()))
    model: str
    choices: list[Choice] = Field(min_length=1)
    usage: Usage | None = None
    timings: Timings | None = None


class FunctionCallDelta(TypedDict, total=False):
    name: str
    arguments: str


class ToolCallDelta(TypedDict, total=False):
    index: Required[int]
    id: str
    type: Literal["function"]
    function: FunctionCallDelta


class Delta(TypedDict, total=False):
    role: Literal["assistant"]
    content: str
    tool_calls: list[ToolCallDelta]


class ChunkChoice(BaseModel):
    index: int = 0
    delta: Delta
    finish_reason: FinishReason | None = None
    logprobs: ChoiceLogprobs | None = None


class ChatCompletionChunk(BaseModel):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = None
    timings: Timings | None = None


# what this project's server takes that an OpenAI-compatible server need not: request fields beyond OpenAI's
# (the first two name tools), and OpenAI's `allowed_tools` tool_choice, which llama-server does not take
ToolExtension = Literal["tool_parameters", "distinct_calls"]
Extension = Literal[ToolExtension, "grammar", "ignore_eos", "tool_rendering", "allowed_tools"]
EXTENSIONS: tuple[Extension, ...] = get_args(Extension)
TOOL_EXTENSIONS: tuple[ToolExtension, ...] = get_args(ToolExtension)


def unread(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A card's field that does not read as its type is left unsaid (None), not the card refused: a client
    reads cards from any server, and what one says beyond its models' ids is only ever advice."""
    try:
        return handler(value)
    except ValidationError:
        return None


Count = Annotated[int | None, Strict(), Field(gt=0), WrapValidator(unread)]  # a count is never `true` or "5"
Text = Annotated[str | None, WrapValidator(unread)]


class CardMeta(BaseModel):
    """What a server says of a model beside its id (llama-server says `n_params` and more; this project's
    server also the context window it runs the model with and the extensions it takes)."""

    model_config = ConfigDict(extra="allow")
    file: Text = None
    size: Count = None
    sha256: Text = None
    quantisation: Text = None
    context: Count = None
    n_params: Count = None
    extensions: list[Extension] = Field(default_factory=list)

    @field_validator("extensions", mode="before")
    @classmethod
    def known_only(cls, value: Any) -> list[str]:
        return [item for item in value if item in EXTENSIONS] if isinstance(value, list) else []


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "local"
    description: str | None = None
    meta: Annotated[CardMeta | None, WrapValidator(unread)] = None

    @classmethod
    def read(cls, raw: builtins.object) -> ModelCard | None:  # `object` is a field here
        """A card as a server sent it, or None when it has no id to know it by (a field beside the id and the
        meta that does not read as OpenAI's is dropped: a client needs only those two)."""
        if not isinstance(raw, dict):
            return None
        for fields in (raw, {"id": raw.get("id"), "meta": raw.get("meta")}):
            try:
                return cls.model_validate(fields)
            except ValidationError:
                continue
        return None


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


def tool_call_deltas(calls: list[ToolCall]) -> list[Delta]:
    """How a streamed reply carries its tool calls: the id and name first, then the arguments."""
    deltas: list[Delta] = []
    for index, call in enumerate(calls):
        head: ToolCallDelta = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        deltas.append({"tool_calls": [head]})
        deltas.append({"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]})
    return deltas


def first_error(exc: ValidationError) -> str:
    """`field.path: message` of a validation error's first problem."""
    error = exc.errors()[0]
    return f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def usage_of(prompt_tokens: int, completion_tokens: int, cached_tokens: int | None = None) -> Usage:
    details = None if cached_tokens is None else PromptTokensDetails(cached_tokens=cached_tokens)
    return Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
        prompt_tokens_details=details,
    )


def decoded_arguments(arguments: str) -> object:
    """A call's arguments text as the JSON it encodes (empty text is `{}`); text that is not JSON, or is nested
    too deeply to decode, comes back as it is."""
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return arguments
