"""NeMo Gym's verify-request schema and its rollout routing, vendored to test ``POST /verify`` against NeMo Gym's own code.

From NeMo Gym (https://github.com/NVIDIA-NeMo/Gym), Apache License 2.0 (the
text is in ``LICENSE-NeMo-Gym`` beside this file), commit
07d6b0d07b22fcf530b4c211dae2ee23100428e4.  nemo-gym requires Python >= 3.13
(and openai <= 2.7.2), so it cannot be installed beside grpo-host here; these
are its schema's call sites, copied unchanged but for the lines marked
``# vendored:``:

* from ``nemo_gym/openai_utils.py``: the "Training-specific" and "Responses
  API inputs" sections through ``NeMoGymResponse`` (the models a resources
  server validates ``responses_create_params`` and ``response`` with);
* from ``nemo_gym/base_resources_server.py``: ``BaseRunRequest``,
  ``BaseVerifyRequest``, ``BaseVerifyResponse`` and
  ``BaseMultiRewardVerifyResponse``;
* from ``nemo_gym/rollout_collection.py``: the routing keys
  (``NG_FAILURE_CLASS_KEY`` ...) and, as ``route`` below, the branch of its
  collection loop that files a verified row as a success or a failure;
* from ``nemo_gym/token_id_capture/delivery.py``: ``MASK_SAMPLE_KEY``, the
  field a trainer reads to leave a rollout out of the loss.
"""
# SPDX-FileCopyrightText: Copyright (c) 2025 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
import json
from asyncio import sleep
from typing import (
    Annotated,
    Any,
    Dict,
    List,
    Literal,
    NotRequired,
    Optional,
    Required,
    TypeAlias,
    Union,
)

from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionContentPartImageParam,
    ChatCompletionContentPartInputAudioParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionDeveloperMessageParam,
    ChatCompletionMessage,
    ChatCompletionMessageToolCall,
    ChatCompletionMessageToolCallParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionToolParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_assistant_message_param import (
    ContentArrayOfContentPart,
)
from openai.types.chat.chat_completion_content_part_param import File as ChatCompletionContentPartFileParam
from openai.types.chat.chat_completion_custom_tool_param import ChatCompletionCustomToolParam
from openai.types.chat.chat_completion_message_custom_tool_call import ChatCompletionMessageCustomToolCall
from openai.types.chat.chat_completion_message_custom_tool_call_param import ChatCompletionMessageCustomToolCallParam
from openai.types.chat.completion_create_params import (
    ChatCompletionAudioParam,
    ChatCompletionPredictionContentParam,
    ChatCompletionStreamOptionsParam,
    ChatCompletionToolChoiceOptionParam,
    ReasoningEffort,
    ResponseFormat,
    WebSearchOptions,
)
from openai.types.responses import (
    FunctionToolParam,
    Response,
    ResponseCodeInterpreterToolCall,
    ResponseComputerToolCall,
    ResponseCustomToolCall,
    ResponseFileSearchToolCall,
    ResponseFunctionWebSearch,
    ResponseInputTextParam,
)
from openai.types.responses.response_create_params import (
    Metadata,
    Reasoning,
    ResponseIncludable,
    ResponsePromptParam,
    ResponsesModel,
    ResponseTextConfigParam,
    ToolChoice,
    ToolParam,
)
from openai.types.responses.response_function_call_output_item_list_param import (
    ResponseFunctionCallOutputItemListParam,
)
from openai.types.responses.response_input_content_param import ResponseInputContentParam
from openai.types.responses.response_input_item import (
    ComputerCallOutput,
    LocalShellCallOutput,
    McpApprovalResponse,
    ResponseCustomToolCallOutput,
)
from openai.types.responses.response_output_item import (
    ImageGenerationCall,
    LocalShellCall,
    McpApprovalRequest,
    McpCall,
    McpListTools,
)
from openai.types.responses.response_output_text_param import Annotation, Logprob
from openai.types.responses.response_reasoning_item import (
    Content as ReasoningContent,
)
from openai.types.responses.response_reasoning_item import (
    Summary,
)
from openai.types.responses.response_usage import InputTokensDetails as ResponseInputTokensDetails
from openai.types.responses.response_usage import OutputTokensDetails as ResponseOutputTokensDetails
from openai.types.responses.response_usage import ResponseUsage
from openai.types.shared.chat_model import ChatModel
from openai.types.shared_params import FunctionDefinition
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from typing_extensions import TypedDict

# vendored: nemo_gym.server_utils (aiohttp client helpers) is not imported: the schema does not use it

########################################
# Training-specific
########################################

# Per-token routed expert indices with shape [tokens, num_moe_layers, topk], either as
# nested int lists or as an opaque string envelope produced by the training framework
# (e.g. NeMo-RL's "nrlre1:<dtype>:<SxLxK>:<base64>"). Gym never inspects the value; the
# string form keeps multi-MB payloads cheap to validate and re-serialize at every hop.
RoutedExperts: TypeAlias = Union[str, List[List[List[int]]]]


class TokenIDLogProbMixin(BaseModel):
    prompt_token_ids: List[int]
    generation_token_ids: List[int]
    generation_log_probs: List[float]
    routed_experts: Optional[RoutedExperts] = None


class TokenIDLogProbTypedDictMixin(TypedDict):
    prompt_token_ids: List[int]
    generation_token_ids: List[int]
    generation_log_probs: List[float]
    routed_experts: NotRequired[RoutedExperts]


REQUIRED_TOKEN_METADATA_FIELDS = frozenset(
    {
        "prompt_token_ids",
        "generation_token_ids",
        "generation_log_probs",
    }
)
TOKEN_METADATA_FIELDS = REQUIRED_TOKEN_METADATA_FIELDS | {"routed_experts"}


def _validate_atomic_token_metadata(value: Any) -> Any:
    """Require complete token metadata when any token field is present."""
    if not isinstance(value, dict):
        return value

    present_fields = TOKEN_METADATA_FIELDS.intersection(value)
    if not present_fields:
        return value

    missing_fields = REQUIRED_TOKEN_METADATA_FIELDS.difference(present_fields)
    if missing_fields:
        missing = ", ".join(sorted(missing_fields))
        raise ValueError(f"Token metadata must include all required fields; missing: {missing}")

    TokenIDLogProbMixin.model_validate({field: value[field] for field in present_fields})
    return value


########################################
# Responses API inputs
########################################


class NeMoGymSummary(Summary):
    pass


class NeMoGymResponseReasoningItem(BaseModel):
    id: str
    # Override the Iterable to avoid lazy iterators in Pydantic validation.
    summary: List[NeMoGymSummary]
    type: Literal["reasoning"] = "reasoning"
    encrypted_content: Optional[str] = None
    content: Optional[List[ReasoningContent]] = None

    # As of Wed Sep 17, 2025, the OpenAI API with GPT-5 returns None for this status rather than a valid value here.
    # On subsequent calls to the OpenAI endpoints within a rollout, the status parameter is not accepted i.e. the OpenAI API returns a bad request when the status parameter is populated.
    # It's not clear whether or not this is intended. We comment out this status parameter here as a quick stop-gap to fix this issue in Gym re-queries.
    # status: Optional[Literal["in_progress", "completed", "incomplete"]] = None


class NeMoGymResponseOutputText(BaseModel):
    # Override the Iterable to avoid lazy iterators in Pydantic validation.
    annotations: List[Annotation]
    text: str
    type: Literal["output_text"] = "output_text"
    logprobs: Optional[List[Logprob]] = None


class NeMoGymResponseOutputRefusal(BaseModel):
    refusal: str
    type: Literal["refusal"] = "refusal"


NeMoGymContent: TypeAlias = Union[NeMoGymResponseOutputText, NeMoGymResponseOutputRefusal]


class NeMoGymResponseOutputMessage(BaseModel):
    id: str
    # Override the Iterable to avoid lazy iterators in Pydantic validation.
    content: List[NeMoGymContent]
    role: Literal["assistant"] = "assistant"
    status: Literal["in_progress", "completed", "incomplete"] = "completed"
    type: Literal["message"] = "message"


class NeMoGymInputVideoPart(TypedDict, total=False):
    """Video content accepted by the Responses-compatible Gym API."""

    type: Required[Literal["input_video"]]
    video_url: Union[str, Dict[str, Any]]
    video: Union[str, Dict[str, Any]]


def _validate_input_video_part(value: Any) -> Any:
    """Require one non-empty source without changing the TypedDict representation."""

    if not isinstance(value, dict) or value.get("type") != "input_video":
        return value

    source_keys = [key for key in ("video_url", "video") if key in value]
    if len(source_keys) != 1:
        raise ValueError("input_video requires exactly one of video_url or video")

    source = value[source_keys[0]]
    url = source.get("url") if isinstance(source, dict) else source
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"input_video.{source_keys[0]} must contain a non-empty URL")
    return value


NeMoGymResponseInputContentPart: TypeAlias = Annotated[
    Union[ResponseInputContentParam, NeMoGymInputVideoPart],
    BeforeValidator(_validate_input_video_part),
]
NeMoGymResponseInputContentList: TypeAlias = List[NeMoGymResponseInputContentPart]


class NeMoGymEasyInputMessage(BaseModel):
    content: Union[str, NeMoGymResponseInputContentList]
    role: Literal["user", "assistant", "system", "developer"]
    type: Literal["message"] = "message"


class NeMoGymMessage(BaseModel):
    content: NeMoGymResponseInputContentList
    role: Literal["user", "system", "developer"]
    status: Literal["in_progress", "completed", "incomplete"] = "completed"
    type: Literal["message"] = "message"


class NeMoGymFunctionCallOutput(BaseModel):
    """
    We copy openai.types.responses.response_input_param.FunctionCallOutput, originally a TypedDict, as a BaseModel here
    so that we can use it in the NeMoGymResponseOutputItem below and be consistent with the other ResponseOutputItem types.
    """

    call_id: str
    output: Union[str, ResponseFunctionCallOutputItemListParam]
    type: Literal["function_call_output"] = "function_call_output"
    id: Optional[str] = None
    status: Optional[Literal["in_progress", "completed", "incomplete"]] = None


class NeMoGymResponseFunctionToolCall(BaseModel):
    arguments: str
    call_id: str
    name: str
    type: Literal["function_call"] = "function_call"
    id: Optional[str] = None
    status: Optional[Literal["in_progress", "completed", "incomplete"]] = None


class NeMoGymResponseMcpCall(McpCall):
    """A hosted-MCP tool call (OpenAI Responses ``mcp_call`` output item).

    Emitted when the upstream endpoint executes a tool *server-side* (e.g.
    NVIDIA-hosted gpt-oss surfacing its built-in python tool as MCP) instead of
    returning a client-executed ``function_call``. The ``output``/``error``
    fields are already populated by the server, so the agent parses and passes
    it through; there is no client-side execution and hence no training variant.

    Inherits the upstream ``McpCall`` typing and only relaxes the fields
    NVIDIA-hosted endpoints may omit or widen: ``id``/``server_label`` are made
    optional and ``status`` accepts any string (upstream pins it to a Literal).
    """

    type: Literal["mcp_call"] = "mcp_call"
    id: Optional[str] = None
    server_label: Optional[str] = None
    status: Optional[str] = None


class NeMoGymResponseMcpListTools(McpListTools):
    """A hosted-MCP tool listing (OpenAI Responses ``mcp_list_tools`` output item).

    Inherits the upstream ``McpListTools`` typing; only ``id``/``server_label``
    are relaxed to optional (NVIDIA-hosted endpoints may omit them) and ``tools``
    is widened to ``List[Any]`` so raw tool entries pass through without being
    coerced into the upstream ``McpListToolsTool`` schema.
    """

    type: Literal["mcp_list_tools"] = "mcp_list_tools"
    tools: List[Any] = Field(default_factory=list)
    id: Optional[str] = None
    server_label: Optional[str] = None


class NeMoGymResponseMcpApprovalRequest(McpApprovalRequest):
    """A hosted-MCP approval request (OpenAI Responses ``mcp_approval_request`` item).

    Inherits the upstream ``McpApprovalRequest`` typing; ``id``/``server_label``
    are relaxed to optional to tolerate endpoints that omit them.
    """

    type: Literal["mcp_approval_request"] = "mcp_approval_request"
    id: Optional[str] = None
    server_label: Optional[str] = None


class NeMoGymResponseFileSearchToolCall(ResponseFileSearchToolCall):
    """A hosted file-search call (OpenAI Responses ``file_search_call`` output item).

    The provider executes the search and returns the call in ``response.output``.
    Inherits the upstream typing unchanged.
    """


class NeMoGymResponseFunctionWebSearch(ResponseFunctionWebSearch):
    """A hosted web-search call (OpenAI Responses ``web_search_call`` output item)."""


class NeMoGymResponseComputerToolCall(ResponseComputerToolCall):
    """A computer-use action for the client to execute (``computer_call`` output item)."""


class NeMoGymImageGenerationCall(ImageGenerationCall):
    """A hosted image-generation call (OpenAI Responses ``image_generation_call`` output item)."""


class NeMoGymResponseCodeInterpreterToolCall(ResponseCodeInterpreterToolCall):
    """A hosted code-interpreter call (OpenAI Responses ``code_interpreter_call`` output item)."""


class NeMoGymLocalShellCall(LocalShellCall):
    """A local-shell command for the client to execute (``local_shell_call`` output item)."""


class NeMoGymResponseCustomToolCall(ResponseCustomToolCall):
    """A client-executed custom tool call (OpenAI Responses ``custom_tool_call`` output item)."""


# These models represent client-supplied results for the calls above.
# The installed SDK defines them in ``response_input_item``.
class NeMoGymComputerCallOutput(ComputerCallOutput):
    """The client's result of a computer-use action (``computer_call_output`` item)."""


class NeMoGymResponseCustomToolCallOutput(ResponseCustomToolCallOutput):
    """The client's result of a custom tool call (``custom_tool_call_output`` item)."""


class NeMoGymLocalShellCallOutput(LocalShellCallOutput):
    """The client's result of a local shell command (``local_shell_call_output`` item)."""


class NeMoGymMcpApprovalResponse(McpApprovalResponse):
    """The client's answer to a hosted-MCP approval request (``mcp_approval_response`` item)."""


class NeMoGymResponseInputText(ResponseInputTextParam):
    pass


class NeMoGymEasyInputMessageForTraining(NeMoGymEasyInputMessage, TokenIDLogProbMixin):
    pass


class NeMoGymMessageForTraining(NeMoGymMessage, TokenIDLogProbMixin):
    pass


class NeMoGymResponseOutputMessageForTraining(NeMoGymResponseOutputMessage, TokenIDLogProbMixin):
    pass


class NeMoGymResponseFunctionToolCallForTraining(NeMoGymResponseFunctionToolCall, TokenIDLogProbMixin):
    pass


class NeMoGymResponseReasoningItemForTraining(NeMoGymResponseReasoningItem, TokenIDLogProbMixin):
    pass


RESPONSES_TO_TRAIN = {
    NeMoGymEasyInputMessage: NeMoGymEasyInputMessageForTraining,
    NeMoGymMessage: NeMoGymMessageForTraining,
    NeMoGymResponseOutputMessage: NeMoGymResponseOutputMessageForTraining,
    NeMoGymResponseFunctionToolCall: NeMoGymResponseFunctionToolCallForTraining,
    NeMoGymResponseReasoningItem: NeMoGymResponseReasoningItemForTraining,
}

# The hosted-tool and client-executed call types have no variant here:
#   web_search_call, file_search_call, code_interpreter_call, image_generation_call,
#   mcp_call, computer_call, custom_tool_call, local_shell_call.
#
# training_variant_of() is reached only from ResponsesConverter.postprocess_assistant_message_dict,
# which passes response_output[-1].
# That list is local to the function.
# It holds only NeMoGymResponseReasoningItem, NeMoGymResponseOutputMessage
# or NeMoGymResponseFunctionToolCall, all registered above.
#
# Each variant is also another member of NeMoGymResponseInputItem.
# That union is validated in smart mode, so an unrecognised item reports the errors of every member.
# Variants that nothing can emit only make those errors harder to read.
#
# The upstream models permit extra fields.
# An item carrying token IDs without a declared variant still round-trips through its base class.
# Add a variant when a converter emits that type with sampled token IDs.


def training_variant_of(item_cls: type) -> type:
    """Return the ForTraining subclass that carries token IDs for ``item_cls``.

    Raises NotImplementedError rather than KeyError, so the message can name the class and the fix.
    Either register the pair in RESPONSES_TO_TRAIN, or stop attaching token IDs to that item.
    """
    try:
        return RESPONSES_TO_TRAIN[item_cls]
    except KeyError:
        raise NotImplementedError(
            f"{item_cls.__name__} has no ForTraining variant, so token IDs and logprobs cannot be "
            f"attached to it. Add it to RESPONSES_TO_TRAIN in nemo_gym/openai_utils.py if the policy "
            f"samples this item's tokens; provider-executed hosted calls should not reach this path."
        ) from None


NeMoGymResponseInputItem = Annotated[
    Union[
        NeMoGymEasyInputMessage,
        NeMoGymMessage,
        NeMoGymResponseOutputMessage,
        NeMoGymResponseFunctionToolCall,
        NeMoGymFunctionCallOutput,
        NeMoGymResponseReasoningItem,
        NeMoGymResponseMcpCall,
        NeMoGymResponseMcpListTools,
        NeMoGymResponseMcpApprovalRequest,
        # The SDK includes these items in both response output and request input.
        # Outputs are replayed as input on subsequent turns.
        NeMoGymResponseFileSearchToolCall,
        NeMoGymResponseFunctionWebSearch,
        NeMoGymResponseComputerToolCall,
        NeMoGymImageGenerationCall,
        NeMoGymResponseCodeInterpreterToolCall,
        NeMoGymLocalShellCall,
        NeMoGymResponseCustomToolCall,
        NeMoGymComputerCallOutput,
        NeMoGymResponseCustomToolCallOutput,
        NeMoGymLocalShellCallOutput,
        NeMoGymMcpApprovalResponse,
        # Training variants.
        NeMoGymEasyInputMessageForTraining,
        NeMoGymMessageForTraining,
        NeMoGymResponseOutputMessageForTraining,
        NeMoGymResponseFunctionToolCallForTraining,
        NeMoGymResponseReasoningItemForTraining,
    ],
    BeforeValidator(_validate_atomic_token_metadata),
]
NeMoGymResponseInput: TypeAlias = List[NeMoGymResponseInputItem]


class NeMoGymResponseCreateParamsNonStreaming(BaseModel):
    """
    This class is a copy of openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming
    We make a copy of it here since ResponseCreateParamsNonStreaming is a TypedDict with no strict validation.
    We need to do server side validation here.
    """

    model_config = ConfigDict(extra="forbid")

    background: Optional[bool] = None
    include: Optional[List[ResponseIncludable]] = None
    input: Union[str, NeMoGymResponseInput]
    instructions: Optional[str] = None
    max_output_tokens: Optional[int] = None
    max_tool_calls: Optional[int] = None
    metadata: Optional[Metadata] = None
    model: Optional[ResponsesModel] = None
    parallel_tool_calls: bool = True  # OpenAI default
    previous_response_id: Optional[str] = None
    prompt: Optional[ResponsePromptParam] = None
    reasoning: Optional[Reasoning] = None
    service_tier: Optional[Literal["auto", "default", "flex", "scale", "priority"]] = None
    store: Optional[bool] = None
    temperature: Optional[float] = None
    text: Optional[ResponseTextConfigParam] = None
    tool_choice: ToolChoice = "auto"  # OpenAI default
    # Override the Iterable to avoid lazy iterators in Pydantic validation.
    tools: List[ToolParam] = Field(default_factory=list)
    top_logprobs: Optional[int] = None
    top_p: Optional[float] = None
    truncation: Optional[Literal["auto", "disabled"]] = None
    user: Optional[str] = None
    stream: Optional[Literal[False]] = None


########################################
# Responses API outputs
########################################


def _require_response_output_item_type(value: Any) -> Any:
    """Prevent an untagged output item from being coerced into the wrong union member."""
    if isinstance(value, dict) and "type" not in value:
        raise ValueError("Responses API output items must include a type discriminator")
    return value


NeMoGymResponseOutputItem = Annotated[
    NeMoGymResponseInputItem,
    BeforeValidator(_require_response_output_item_type),
]


class NeMoGymResponseInputTokensDetails(ResponseInputTokensDetails):
    cached_tokens: Optional[int]


class NeMoGymResponseOutputTokensDetails(ResponseOutputTokensDetails):
    reasoning_tokens: Optional[int]


class NeMoGymResponseUsage(ResponseUsage):
    input_tokens_details: NeMoGymResponseInputTokensDetails
    output_tokens_details: NeMoGymResponseOutputTokensDetails

    @classmethod
    def sum_from_list(cls, usages: "NeMoGymResponseUsage") -> "NeMoGymResponseUsage":
        final_usage = NeMoGymResponseUsage(
            input_tokens=0,
            input_tokens_details=NeMoGymResponseInputTokensDetails(cached_tokens=0),
            output_tokens=0,
            output_tokens_details=NeMoGymResponseOutputTokensDetails(reasoning_tokens=0),
            total_tokens=0,
        )
        for usage in usages:
            final_usage.input_tokens += usage.input_tokens
            final_usage.input_tokens_details.cached_tokens = _add_optional_token_counts(
                final_usage.input_tokens_details.cached_tokens,
                usage.input_tokens_details.cached_tokens,
            )
            final_usage.output_tokens += usage.output_tokens
            final_usage.output_tokens_details.reasoning_tokens = _add_optional_token_counts(
                final_usage.output_tokens_details.reasoning_tokens,
                usage.output_tokens_details.reasoning_tokens,
            )
            final_usage.total_tokens += usage.total_tokens

        return final_usage


def _add_optional_token_counts(left: Optional[int], right: Optional[int]) -> Optional[int]:
    """Add reported token counts without turning an unknown count into a measurement."""
    if left is None or right is None:
        return None
    return left + right


class NeMoGymResponse(Response):
    output: List[NeMoGymResponseOutputItem]
    usage: Optional[NeMoGymResponseUsage] = None


# vendored: from nemo_gym/base_resources_server.py
class BaseRunRequest(BaseModel):
    responses_create_params: NeMoGymResponseCreateParamsNonStreaming


class BaseVerifyRequest(BaseRunRequest):
    response: NeMoGymResponse


class BaseVerifyResponse(BaseVerifyRequest):
    reward: float


class BaseMultiRewardVerifyResponse(BaseVerifyResponse):
    """Base verify response for environments with multiple reward objectives.

    Subclass this response instead of declaring ``reward_components`` on an
    environment-specific ``BaseVerifyResponse`` subclass. The mapping is required, and
    its objective keys should remain consistent across every task in the environment.

    Set the inherited ``reward`` to the scalar aggregate expected by single-reward
    consumers. To include individual objectives in aggregate metrics, also expose them
    as top-level numeric fields because metrics do not descend into this mapping. See
    ``resources_servers/example_tool_call_multireward`` for a complete example.
    """

    reward_components: dict[str, float]


# vendored: from nemo_gym/rollout_collection.py
NG_FAILURE_CLASS_KEY = "_ng_failure_class"
NG_NO_PERSIST_KEY = "_ng_no_persist"
NG_TERMINAL_KEY = "_ng_failure_terminal"
# vendored: from nemo_gym/token_id_capture/delivery.py
MASK_SAMPLE_KEY = "mask_sample"


# vendored: the branch of the collection loop in rollout_collection.py that files a verified row, as a function
# returning where it goes (the loop writes it to that file)
def route(result: dict) -> str:
    no_persist = bool(result.get(NG_NO_PERSIST_KEY))
    failure_class = result.get(NG_FAILURE_CLASS_KEY)

    if no_persist:
        # kill_shaped: don't write anywhere. Set-difference on resume
        # naturally re-dispatches; per-task timeout bounds wallclock.
        return "nowhere"  # vendored: was pass
    elif failure_class is not None:
        # Non-kill_shaped failure → sidecar. The aggregator only reads
        # the main jsonl, so this keeps win-rate uncontaminated.
        return "failures"  # vendored: was failures_file.write(serialized + b"\n")
    else:
        # Success → main jsonl.
        return "results"  # vendored: was results_file.write(serialized + b"\n")
