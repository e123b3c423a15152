"""ONNX Runtime's exceptions in one short line for a person, and whether one says that a
model which loaded failed on the inputs it was given.

ORT's exception text holds all its log record would say (sessions here log fatal errors
only, so nothing of ORT reaches stderr): ``[ONNXRuntimeError] : 1 : FAIL : Non-zero status
code returned while running Reshape node. Name:'rs' Status Message: /src/reshape_helper.h:91
onnxruntime::ReshapeHelper::ReshapeHelper(…) input_shape_size == requested_shape_size was
false. …``. :func:`error_line` makes that ``Reshape node 'rs': input_shape_size ==
requested_shape_size was false. …``. String work only: no onnxruntime import.
"""

from __future__ import annotations

import re

#: the longest line :func:`error_line` gives
MAX_CHARS = 400

#: ``[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : `` (status number and code word)
_PREFIX = re.compile(r"^\[ONNXRuntimeError\] : \d+ : (?P<code>[A-Z_]+) : ")
#: a kernel's failure while the model ran: op type, node name, message
_NODE = re.compile(
    r"^Non-zero status code returned while running (?P<op>\S+) node\. "
    r"Name:'(?P<name>[^']*)' Status Message: (?P<message>.*)$"
)
#: the C++ place a status message may start with: ``/src/x.h:91 ns::F(args) `` (the
#: signature may carry a return type, ``virtual OrtValue* ns::F(int) ``)
_PLACE = re.compile(r"\S+\.(?:h|hpp|cc|cpp|cu):\d+ (?:(?:[\w:~<>*&]+ )*[\w:~<>]+\(.*?\) )?")
#: a node that failed while the model ran (:func:`error_line`'s form): the model loaded
_RAN_NODE = re.compile(r"\b\S+ node (?:'[^']*'|\(unnamed\)): ")
#: ORT's words for a model it rejects while loading it, whatever the code word: ``INVALID_
#: ARGUMENT: Invalid model. Node input 'x' is not a graph input, …``, ``INVALID_GRAPH: This
#: is an invalid model. …``, ``Load model from m.onnx failed: …``
_MODEL_REJECTED = re.compile(
    r"\binvalid model\b|\bLoad model from\b.*\bfailed\b|\bFailed to load model\b", re.IGNORECASE
)
#: ORT's words for inputs that do not fit a model that loaded (``INVALID_ARGUMENT: Got
#: invalid dimensions for input: x …``, ``… Unexpected input data type …``)
_INPUTS_REFUSED = re.compile(r"INVALID_ARGUMENT|invalid dimensions")


def error_line(exc: BaseException) -> str:
    """``exc`` (what ONNX Runtime raised, or any exception) in one line of at most
    :data:`MAX_CHARS` characters: ORT's ``[ONNXRuntimeError] : N : CODE :`` prefix off
    (the code word kept unless it is the generic ``FAIL``), a kernel's failure as
    ``Op node 'name': message``, the C++ source place and function out, lines joined."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    code = ""
    prefix = _PREFIX.match(text)
    if prefix:
        text = text[prefix.end() :]
        code = prefix.group("code")
    node = _NODE.match(text)
    if node:
        name = f"'{node.group('name')}'" if node.group("name") else "(unnamed)"
        text = f"{node.group('op')} node {name}: {_PLACE.sub('', node.group('message'), count=1)}"
    else:
        text = _PLACE.sub("", text, count=1)
        if code and code != "FAIL":
            text = f"{code}: {text}"
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def failed_on_inputs(text: str) -> bool:
    """True when ``text`` (a reason holding an :func:`error_line`) says the model loaded in
    ONNX Runtime and failed on the inputs given: other inputs may let it run.

    False for a model ORT rejects while loading it, also under the code word that input
    errors share (``INVALID_ARGUMENT: Invalid model. …``): no inputs would help, the model
    is what to fix."""
    if _RAN_NODE.search(text):
        return True
    if _MODEL_REJECTED.search(text):
        return False
    return _INPUTS_REFUSED.search(text) is not None
