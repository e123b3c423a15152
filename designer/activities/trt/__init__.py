"""TensorRT activities: build options per version, trtexec command lines, detection on a target.

Standard library only on the host side (tensorrt is only ever imported by the runner scripts
on the target).
"""
