"""Long jobs and optional runtimes; heavy imports (onnxruntime, paramiko) inside functions."""
