"""Build a TensorRT engine with the tensorrt Python API. Runs ON THE TARGET.

Standard library + tensorrt only (Python >= 3.9): copied to the target's deployment folder and
run with the Python that has tensorrt (the deployment venv, or the system python3 on a Jetson).
Never imported by the host.

    python trt_build.py --settings SETTINGS.json [--result RESULT.json]
    python trt_build.py --version

SETTINGS.json is :func:`designer.activities.trt.python_builder.python_builder_settings`'s dict;
every tensorrt name used is taken from it (``getattr(trt.BuilderFlag, name)`` …) or from the
fixed list checked against the bindings' sources. Writes the engine, the layer-information
JSON (``layer_info``) and the timing cache; RESULT.json says what was built. Errors go to
stderr with exit status 2 (bad settings / no tensorrt) or 3 (the build failed).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import time
from typing import Any

EXIT_USAGE = 2
EXIT_FAILED = 3


def log(message: str) -> None:
    print(message, flush=True)


def fail(message: str, status: int) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    sys.exit(status)


def _write(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def build(settings: dict[str, Any], trt: Any) -> dict[str, Any]:
    logger = trt.Logger(trt.Logger.Severity.INFO)
    for lib in settings["plugins"]:
        log(f"loading plugin library {lib}")
        ctypes.CDLL(lib)
    builder = trt.Builder(logger)
    flags = 0
    for name in settings["network_flags"]:
        flags |= 1 << int(getattr(trt.NetworkDefinitionCreationFlag, name))
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not settings["native_instance_norm"]:
        parser.clear_flag(trt.OnnxParserFlag.NATIVE_INSTANCENORM)
    log(f"parsing {settings['model']}")
    if not parser.parse_from_file(settings["model"]):
        errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
        fail("the ONNX parser failed: " + ("; ".join(errors) or "no details"), EXIT_FAILED)
    config = builder.create_builder_config()
    for name in settings["set_flags"]:
        config.set_flag(getattr(trt.BuilderFlag, name))
    for name in settings["clear_flags"]:
        config.clear_flag(getattr(trt.BuilderFlag, name))
    for pool, size in settings["memory_pool_limits"].items():
        config.set_memory_pool_limit(getattr(trt.MemoryPoolType, pool), int(size))
    config.profiling_verbosity = getattr(trt.ProfilingVerbosity, settings["profiling_verbosity"])
    if settings["builder_optimization_level"] is not None:
        config.builder_optimization_level = int(settings["builder_optimization_level"])
    if settings["max_aux_streams"] is not None:
        config.max_aux_streams = int(settings["max_aux_streams"])
    config.hardware_compatibility_level = getattr(
        trt.HardwareCompatibilityLevel, settings["hardware_compatibility_level"]
    )
    if settings["tactic_sources"]:
        mask = int(config.get_tactic_sources())
        for name, on in settings["tactic_sources"].items():
            bit = 1 << int(getattr(trt.TacticSource, name))
            mask = (mask | bit) if on else (mask & ~bit)
        config.set_tactic_sources(mask)
    for shapes in settings["profiles"]:
        profile = builder.create_optimization_profile()
        for name, (lo, opt, hi) in shapes.items():
            profile.set_shape(name, lo, opt, hi)
        config.add_optimization_profile(profile)
    wanted = settings["layer_precisions"]
    outputs = settings["layer_output_types"]
    found = set()
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        if layer.name in wanted:
            layer.precision = getattr(trt.DataType, wanted[layer.name])
            found.add(layer.name)
        for j, dtype in enumerate(outputs.get(layer.name, [])):
            if j < layer.num_outputs:
                layer.set_output_type(j, getattr(trt.DataType, dtype))
                found.add(layer.name)
    missing = sorted((set(wanted) | set(outputs)) - found)
    if missing:
        log(f"warning: no TensorRT layer named {', '.join(missing)} (precision not applied)")
    if settings.get("int8_placeholder_ranges"):
        # INT8 without a calibration cache: placeholder dynamic ranges, as trtexec sets them
        # (network inputs ±2, layer outputs ±4): for performance measurements, not accuracy.
        for i in range(network.num_inputs):
            network.get_input(i).set_dynamic_range(-2.0, 2.0)
        for i in range(network.num_layers):
            layer = network.get_layer(i)
            for j in range(layer.num_outputs):
                layer.get_output(j).set_dynamic_range(-4.0, 4.0)
        log("INT8 without calibration: placeholder dynamic ranges (inputs ±2, outputs ±4)")
    cache_path = settings["timing_cache"]
    cache_bytes = b""
    if cache_path and os.path.isfile(cache_path):
        with open(cache_path, "rb") as f:
            cache_bytes = f.read()
    cache = config.create_timing_cache(cache_bytes)
    config.set_timing_cache(cache, False)
    log("building the engine")
    start = time.monotonic()
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        fail("the engine build failed (see the TensorRT log above)", EXIT_FAILED)
    seconds = time.monotonic() - start
    data = bytes(plan)
    if settings["engine"]:
        _write(settings["engine"], data)
        log(f"engine saved to {settings['engine']} ({len(data)} bytes)")
    if cache_path:
        _write(cache_path, bytes(config.get_timing_cache().serialize()))
    if settings["layer_info"]:
        runtime = trt.Runtime(logger)
        engine = runtime.deserialize_cuda_engine(data)
        inspector = engine.create_engine_inspector()
        info = inspector.get_engine_information(trt.LayerInformationFormat.JSON)
        _write(settings["layer_info"], str(info).encode("utf-8"))
    return {"status": "ok", "seconds": seconds, "engine_bytes": len(data), "missing": missing}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="trt_build.py")
    p.add_argument("--settings")
    p.add_argument("--result")
    p.add_argument("--version", action="store_true")
    args = p.parse_args(argv)
    settings: dict[str, Any] = {}
    if not args.version:
        if not args.settings:
            fail("--settings is required", EXIT_USAGE)
        try:
            with open(args.settings, encoding="utf-8") as f:
                settings = json.load(f)
        except (OSError, ValueError) as exc:
            fail(f"cannot read {args.settings}: {exc}", EXIT_USAGE)
        if settings.get("device"):
            # The Python API builds on the current CUDA device: choose it before tensorrt loads.
            os.environ["CUDA_VISIBLE_DEVICES"] = str(int(settings["device"]))
            log(f"device {settings['device']} (CUDA_VISIBLE_DEVICES)")
    try:
        import tensorrt as trt
    except ImportError as exc:
        # NVIDIA's standalone binary wheels (tensorrt-cu12-bindings + -libs, what deployment
        # installs) name the module tensorrt_bindings; the tensorrt metapackage wraps it.
        try:
            import tensorrt_bindings as trt
        except ImportError:
            fail(f"tensorrt cannot be imported with {sys.executable}: {exc}", EXIT_USAGE)
    if args.version:
        print(trt.__version__)
        return 0
    result = build(settings, trt)
    result["tensorrt"] = str(trt.__version__)
    if args.result:
        _write(args.result, json.dumps(result, indent=1).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
