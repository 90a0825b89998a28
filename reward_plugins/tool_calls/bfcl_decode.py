"""BFCL's decoding of calls written as text (its prompting mode), vendored: what ``text_calls`` reads.

From the Berkeley Function Calling Leaderboard (https://github.com/ShishirPatil/gorilla,
``berkeley-function-call-leaderboard/bfcl_eval/model_handler/utils.py`` (``default_decode_ast_prompting``,
``ast_parse``, ``resolve_ast_call``, ``resolve_ast_by_type``) and ``model_handler/parser/json_parser.py`` and
``xml_parser.py``), as released on PyPI as ``bfcl-eval`` 2026.3.23 (wheel sha256
3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a).  Copyright the Gorilla/BFCL authors, Apache License 2.0:
the text is in ``LICENSE-bfcl`` beside this file.

Copied unchanged but for the lines marked ``# grpo-host:``: only Python, JSON and XML are kept (Java and
JavaScript left out); an argument written as an arithmetic expression or a lambda, which upstream ``eval``s, is
refused (the text fails to decode), since the text is a policy's output and is never run.
"""

# ruff: noqa  -- vendored code, kept as upstream wrote it so a diff against upstream stays readable

import ast
import json
import re
import xml.etree.ElementTree as ET

from enum import Enum


class ReturnFormat(Enum):  # grpo-host: from bfcl_eval/constants/enums.py, the formats kept here
    PYTHON = "python"
    JSON = "json"
    VERBOSE_XML = "verbose_xml"
    CONCISE_XML = "concise_xml"


# grpo-host: from model_handler/parser/json_parser.py
def parse_json_function_call(source_code):
    json_match = re.search(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", source_code, re.DOTALL)
    if json_match:
        source_code = json_match.group(0)

    try:
        json_dict = json.loads(source_code)
    except json.JSONDecodeError as e:
        return []

    function_calls = []
    for function_call in json_dict:
        if isinstance(function_call, dict):
            function_name = function_call["function"]
            arguments = function_call["parameters"]
            function_calls.append({function_name: arguments})
    return function_calls


# grpo-host: from model_handler/parser/xml_parser.py
def convert_value_by_type(raw_value, type_str):
    if type_str == "string":
        return raw_value
    elif type_str == "integer":
        return int(raw_value)
    elif type_str == "float":
        return float(raw_value)
    elif type_str == "boolean":
        return raw_value.lower() == "true"
    elif type_str == "null":
        return None
    elif (
        type_str == "array"
        or type_str == "tuple"
        or type_str == "object"
        or type_str == "dict"
    ):
        return ast.literal_eval(raw_value)
    else:
        return raw_value  # fallback to raw string


def parse_verbose_xml_function_call(input_str):
    root = ET.fromstring(input_str)
    results = []

    for func in root.findall("function"):
        func_name = func.attrib["name"]
        param_dict = {}

        params_container = func.find("params")
        param_elements = (
            params_container.findall("param")
            if params_container is not None
            else func.findall("param")
        )

        for param in param_elements:
            name = param.attrib.get("name")
            raw_value = param.attrib.get("value", "")
            type_str = param.attrib.get("type", "string")
            parsed_value = convert_value_by_type(raw_value, type_str)
            param_dict[name] = parsed_value

        results.append({func_name: param_dict})

    return results


def parse_concise_xml_function_call(input_str):
    root = ET.fromstring(input_str)
    results = []

    for func in root.findall("function"):
        func_name = func.attrib["name"]
        param_dict = {}

        for param in func.findall("param"):
            name = param.attrib["name"]
            raw_value = param.text or ""
            type_str = param.attrib.get("type", "string")
            parsed_value = convert_value_by_type(raw_value.strip(), type_str)
            param_dict[name] = parsed_value

        results.append({func_name: param_dict})

    return results


# grpo-host: from model_handler/utils.py
def ast_parse(
    input_str: str,
    language: ReturnFormat = ReturnFormat.PYTHON,
    has_tool_call_tag: bool = False,
) -> list[dict]:
    if has_tool_call_tag:
        match = re.search(r"<TOOLCALL>(.*?)</TOOLCALL>", input_str, re.DOTALL)
        if match:
            input_str = match.group(1).strip()
        else:
            raise ValueError(f"No tool call tag found in input string: {input_str}")

    if language == ReturnFormat.PYTHON:
        # We only want to remove wrapping quotes that could have been added by the model.
        cleaned_input = input_str.strip().strip("'")
        parsed = ast.parse(cleaned_input, mode="eval")
        extracted = []
        if isinstance(parsed.body, ast.Call):
            extracted.append(resolve_ast_call(parsed.body))
        else:
            for elem in parsed.body.elts:
                assert isinstance(elem, ast.Call)
                extracted.append(resolve_ast_call(elem))
        return extracted

    # grpo-host: the Java and JavaScript branches are left out (Python, XML and JSON only)
    elif language == ReturnFormat.VERBOSE_XML:
        # Remove ```xml and anything before/after XML
        match = re.search(r"<functions>(.*?)</functions>", input_str, re.DOTALL)
        if not match:
            raise ValueError(
                f"No XML function call found in input string: {input_str}. Missing <functions> tag."
            )
        return parse_verbose_xml_function_call(match.group(0))

    elif language == ReturnFormat.CONCISE_XML:
        # Remove anything before/after <functions> and </functions>
        match = re.search(r"<functions>(.*?)</functions>", input_str, re.DOTALL)
        if not match:
            raise ValueError(
                f"No XML function call found in input string: {input_str}. Missing <functions> tag."
            )
        return parse_concise_xml_function_call(match.group(0))

    elif language == ReturnFormat.JSON:
        json_match = re.search(r"\[.*\]", input_str, re.DOTALL)
        if json_match:
            input_str = json_match.group(0)
        return parse_json_function_call(input_str)

    else:
        raise NotImplementedError(f"Unsupported language: {language}")


def resolve_ast_call(elem):
    # Handle nested attributes for deeply nested module paths
    func_parts = []
    func_part = elem.func
    while isinstance(func_part, ast.Attribute):
        func_parts.append(func_part.attr)
        func_part = func_part.value
    if isinstance(func_part, ast.Name):
        func_parts.append(func_part.id)
    func_name = ".".join(reversed(func_parts))
    args_dict = {}
    for arg in elem.keywords:
        output = resolve_ast_by_type(arg.value)
        args_dict[arg.arg] = output
    return {func_name: args_dict}


def resolve_ast_by_type(value):
    if isinstance(value, ast.Constant):
        if value.value is Ellipsis:
            output = "..."
        else:
            output = value.value
    elif isinstance(value, ast.UnaryOp):
        output = -value.operand.value
    elif isinstance(value, ast.List):
        output = [resolve_ast_by_type(v) for v in value.elts]
    elif isinstance(value, ast.Dict):
        output = {
            resolve_ast_by_type(k): resolve_ast_by_type(v)
            for k, v in zip(value.keys, value.values)
        }
    elif isinstance(
        value, ast.NameConstant
    ):  # Added this condition to handle boolean values
        output = value.value
    elif isinstance(
        value, ast.BinOp
    ):  # Added this condition to handle function calls as arguments
        raise ValueError("an expression is not a value")  # grpo-host: upstream eval()s it; model output is never run
    elif isinstance(value, ast.Name):
        output = value.id
    elif isinstance(value, ast.Call):
        if len(value.keywords) == 0:
            output = ast.unparse(value)
        else:
            output = resolve_ast_call(value)
    elif isinstance(value, ast.Tuple):
        output = tuple(resolve_ast_by_type(v) for v in value.elts)
    elif isinstance(value, ast.Lambda):
        raise ValueError("a lambda is not a value")  # grpo-host: upstream eval()s it; model output is never run
    elif isinstance(value, ast.Ellipsis):
        output = "..."
    elif isinstance(value, ast.Subscript):
        try:
            output = ast.unparse(value.body[0].value)
        except:
            output = ast.unparse(value.value) + "[" + ast.unparse(value.slice) + "]"
    else:
        raise Exception(f"Unsupported AST type: {type(value)}")
    return output


def default_decode_ast_prompting(
    result: str,
    language: ReturnFormat = ReturnFormat.PYTHON,
    has_tool_call_tag: bool = False,
) -> list[dict]:
    result = result.strip("`\n ")
    if not result.startswith("["):
        result = "[" + result
    if not result.endswith("]"):
        result = result + "]"
    decoded_output = ast_parse(result, language, has_tool_call_tag)
    return decoded_output
