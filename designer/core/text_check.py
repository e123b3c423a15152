"""Is every text field of a serialized ONNX model valid UTF-8? Answered in C, in one parse.

python protobuf hands a proto2 ``string`` field that is not valid UTF-8 back as ``bytes``,
so :mod:`designer.core.validate` used to read every name, op type and tensor name of a
model to find one (at 100,000 nodes that Python pass cost about half a second). proto3
parsers check UTF-8 themselves: this module keeps a proto3 twin of ``onnx.proto`` (the
same messages, field numbers and types, in a package of its own) and parses the file's
bytes with it. upb then checks every ``string`` field while decoding; ``bytes`` fields
(raw tensor data, string attributes) are not text and are not checked.

The twin may refuse more than the walk would (it checks every ``string`` field, the walk
only those code reads) and refuses what it cannot parse for any other reason too; so a
refusal only means "look closer": :func:`designer.core.validate.check_model` then walks
the model the slow way, which names the field or accepts the model.
"""

from __future__ import annotations

import logging
from functools import cache

import onnx
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

_PACKAGE = "designer_text_check"
logger = logging.getLogger(__name__)


def _twin() -> type[Message]:
    """The proto3 twin of ``onnx.ModelProto``, in a pool of its own (:func:`_safe_twin`
    builds it once)."""
    file = descriptor_pb2.FileDescriptorProto()
    onnx.ModelProto.DESCRIPTOR.file.CopyToProto(file)
    old = f".{file.package}."
    file.name = f"{_PACKAGE}/onnx.proto"
    file.package = _PACKAGE
    file.syntax = "proto3"
    messages = list(file.message_type)
    while messages:
        message = messages.pop()
        messages.extend(message.nested_type)
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = f".{_PACKAGE}.{field.type_name[len(old) :]}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    twin: type[Message] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{_PACKAGE}.ModelProto")
    )
    return twin


def text_is_utf8(data: bytes) -> bool:
    """True when ``data`` parses as a model whose every text field is valid UTF-8; False
    when it does not (bad text, or anything else the parse refuses: ask the walk), and
    when no twin can be made of this onnx's schema (e.g. one split over several files)."""
    twin = _safe_twin()
    if twin is None:
        return False
    try:
        twin.FromString(data)
    except (DecodeError, RuntimeError, ValueError):
        return False
    return True


@cache
def _safe_twin() -> type[Message] | None:
    """The twin, built once; None (and a warning logged) when it cannot be built."""
    try:
        return _twin()
    except Exception:  # any failure to build it only means: walk instead
        logger.warning("no proto3 twin of onnx.proto: text is checked by the walk", exc_info=True)
        return None
